#include "settings/suite_file.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

// Notes whether a document held anything but null, and where the second one began; parses no
// node (a file of a million empty documents costs no memory).
class DocumentScan : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents;
    if (documents == 2) second_line = mark.line + 1;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { content = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    content = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnMapEnd() override {}

  int documents = 0;
  int second_line = 0;
  bool content = false;  // in the document last handled
};

// The line where a second YAML document with content begins, or where a third begins at all
// (an empty one after a closing --- is allowed); nullopt for a single document.
std::optional<int> second_document_line(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentScan scan;
  for (int handled = 0; handled < 3; ++handled) {
    scan.content = false;
    if (!parser.HandleNextDocument(scan)) return std::nullopt;
    if (handled == 1 && scan.content) return scan.second_line;
    if (handled == 2) return scan.second_line;
  }
  return std::nullopt;
}

// A field as written in the file, with its line (0 where the parser gives none).
struct RawField {
  std::string key;
  nlohmann::json value;
  int line = 0;
};
using RawEntry = std::vector<RawField>;

// `rehearsal:` (run --rehearsal): the same entries at other sizes, on another device.
struct RawRehearsal {
  bool present = false;
  int line = 0;
  RawEntry set;  // every entry's value, over its own
  // per key: the value as written -> the value instead, where an entry's value is one of them
  std::vector<std::pair<RawField, std::vector<std::pair<std::string, nlohmann::json>>>> replace;
};

struct RawSuite {
  RawEntry defaults;
  std::vector<std::pair<RawEntry, int>> benchmarks;  // entry and its line
  RawRehearsal rehearsal;
};

constexpr const char* kTopLevelKeys = "defaults, benchmarks, rehearsal, name, description";

class SuiteParser {
 public:
  explicit SuiteParser(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(int line, const std::string& message) const {
    throw UsageError(echoed(name_) + (line > 0 ? ":" + std::to_string(line) : "") + ": " + message);
  }

  RawEntry entry_from_json(const nlohmann::json& object, const std::string& where) const {
    if (!object.is_object()) fail(0, where + " must be a mapping of benchmark fields");
    RawEntry entry;
    for (const auto& [key, value] : object.items()) entry.push_back({key, value, 0});
    return entry;
  }

  RawRehearsal rehearsal_from_json(const nlohmann::json& object) const {
    if (!object.is_object()) fail(0, "'rehearsal' must be a mapping with 'set' and 'replace'");
    RawRehearsal rehearsal;
    rehearsal.present = true;
    for (const auto& [key, value] : object.items()) {
      if (key == "set") {
        rehearsal.set = entry_from_json(value, "'rehearsal.set'");
      } else if (key == "replace") {
        if (!value.is_object()) fail(0, "'rehearsal.replace' must map keys to value mappings");
        for (const auto& [field, mapping] : value.items()) {
          if (!mapping.is_object()) {
            fail(0, "'rehearsal.replace." + echoed(field) + "' must map values to values");
          }
          std::vector<std::pair<std::string, nlohmann::json>> pairs;
          for (const auto& [from, to] : mapping.items()) pairs.emplace_back(from, to);
          rehearsal.replace.push_back({{field, nullptr, 0}, std::move(pairs)});
        }
      } else {
        fail(0, "unknown key 'rehearsal." + echoed(key) + "'; allowed: set, replace");
      }
    }
    return rehearsal;
  }

  RawRehearsal rehearsal_from_yaml(const YAML::Node& node) const {
    if (!node.IsMap()) {
      fail(line_of(node), "'rehearsal' must be a mapping with 'set' and 'replace'");
    }
    RawRehearsal rehearsal;
    rehearsal.present = true;
    rehearsal.line = line_of(node);
    for (const auto& item : node) {
      const std::string key = key_of(item.first);
      if (key == "set") {
        rehearsal.set = entry_from_yaml(item.second, "'rehearsal.set'");
      } else if (key == "replace") {
        if (!item.second.IsMap()) {
          fail(line_of(item.first), "'rehearsal.replace' must map keys to value mappings");
        }
        for (const auto& field : item.second) {
          if (!field.second.IsMap()) {
            fail(line_of(field.first), "'rehearsal.replace." + echoed(key_of(field.first)) +
                                           "' must map values to values");
          }
          std::vector<std::pair<std::string, nlohmann::json>> pairs;
          for (const auto& pair : field.second) {
            pairs.emplace_back(plain_text(scalar_from_yaml(pair.first, true)),
                               scalar_from_yaml(pair.second, true));
          }
          rehearsal.replace.push_back(
              {{key_of(field.first), nullptr, line_of(field.first)}, std::move(pairs)});
        }
      } else {
        fail(line_of(item.first),
             "unknown key 'rehearsal." + echoed(key) + "'; allowed: set, replace");
      }
    }
    return rehearsal;
  }

  RawSuite from_json(const std::string& text) const {
    const nlohmann::json document = parse_json_input(text, name_);
    if (!document.is_object()) fail(0, "a suite must be a mapping with 'benchmarks'");
    RawSuite suite;
    for (const auto& [key, value] : document.items()) {
      if (key == "defaults") {
        suite.defaults = entry_from_json(value, "'defaults'");
      } else if (key == "benchmarks") {
        if (!value.is_array()) fail(0, "'benchmarks' must be a list");
        for (const auto& entry : value) {
          suite.benchmarks.push_back({entry_from_json(entry, "each benchmark"), 0});
        }
      } else if (key == "rehearsal") {
        suite.rehearsal = rehearsal_from_json(value);
      } else if (key != "name" && key != "description") {
        fail(0, "unknown top-level key '" + echoed(key) + "'; allowed: " + kTopLevelKeys);
      }
    }
    return suite;
  }

  // A field's value: a scalar, or a list of scalars (never nested, so that no alias can make a
  // small file expand into a large tree).
  nlohmann::json scalar_from_yaml(const YAML::Node& node, bool in_list = false) const {
    if (node.IsSequence() && !in_list) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : node) list.push_back(scalar_from_yaml(item, true));
      return list;
    }
    if (!node.IsScalar()) {
      fail(line_of(node), in_list ? "a list in a benchmark field may hold values only"
                                  : "a benchmark field must be a value or a list of values");
    }
    const std::string text = node.Scalar();
    // One typing rule: a quoted value and one tagged !!str are strings; a plain one, or one tagged
    // with another of YAML's core scalar types, is read for what it looks like.
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;
    static const std::set<std::string> kReadAsWritten = {
        "?", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:null"};
    if (kReadAsWritten.count(tag) == 0) {
      fail(line_of(node), "tag '" + echoed(tag) +
                              "' is not taken here; a value is plain, quoted, or tagged with one "
                              "of YAML's core types (!!str, !!int, !!float, !!bool)");
    }
    if (text == "true" || text == "True") return true;
    if (text == "false" || text == "False") return false;
    try {
      size_t used = 0;
      const long long number = std::stoll(text, &used);
      if (used == text.size()) return number;
      const double real = std::stod(text, &used);
      if (used == text.size() && std::isfinite(real)) return real;  // "nan" stays text
    } catch (const std::exception&) {
    }
    return text;
  }

  static int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

  std::string key_of(const YAML::Node& key) const {
    if (!key.IsScalar()) fail(line_of(key), "a key must be a plain name, not a list or mapping");
    return key.Scalar();
  }

  RawEntry entry_from_yaml(const YAML::Node& node, const std::string& where) const {
    if (!node.IsMap()) fail(line_of(node), where + " must be a mapping of benchmark fields");
    RawEntry entry;
    for (const auto& item : node) {
      entry.push_back({key_of(item.first), scalar_from_yaml(item.second), line_of(item.first)});
    }
    return entry;
  }

  RawSuite from_yaml(const std::string& text) const {
    YAML::Node document;
    try {
      // A second document (after ---) would be dropped silently by YAML::Load: refused.
      if (const std::optional<int> line = second_document_line(text)) {
        fail(*line,
             "a suite is one YAML document; this file has another after '---': put every "
             "benchmark under one 'benchmarks'");
      }
      document = YAML::Load(text);
    } catch (const YAML::DeepRecursion& error) {  // yaml-cpp's own guard, at 2000 levels
      fail(error.mark.line + 1,
           "nested more than " + std::to_string(error.depth() - 1) + " levels deep");
    } catch (const YAML::Exception& error) {
      fail(error.mark.line + 1, "malformed YAML: " + echoed(error.msg));
    }
    if (!document.IsMap()) fail(0, "a suite must be a mapping with 'benchmarks'");
    RawSuite suite;
    std::set<std::string> seen;
    for (const auto& item : document) {
      const std::string key = key_of(item.first);
      if (!seen.insert(key).second) fail(line_of(item.first), given_twice(key));
      if (key == "defaults") {
        suite.defaults = entry_from_yaml(item.second, "'defaults'");
      } else if (key == "benchmarks") {
        if (!item.second.IsSequence()) fail(line_of(item.first), "'benchmarks' must be a list");
        for (const auto& entry : item.second) {
          suite.benchmarks.push_back({entry_from_yaml(entry, "each benchmark"), line_of(entry)});
        }
      } else if (key == "rehearsal") {
        suite.rehearsal = rehearsal_from_yaml(item.second);
      } else if (key != "name" && key != "description") {
        fail(line_of(item.first),
             "unknown top-level key '" + echoed(key) + "'; allowed: " + kTopLevelKeys);
      }
    }
    return suite;
  }

  // `assignment`, KEY=VALUE (run --set), as a field over every entry: the key a suite setting, the
  // value read as a plain value in a suite file is (a number, true or false, text, or a [list]
  // that expands), and checked as the setting's values are.
  RawField override_from_text(const std::string& assignment) const {
    const size_t equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      fail(0, "give KEY=VALUE, KEY one of: " + join(suite_keys()));
    }
    const std::string key = assignment.substr(0, equals);
    const BenchmarkField* field = find_benchmark_field(key);
    if (field == nullptr || !field->suite) {
      fail(0, "unknown key '" + echoed(key) + "'; known: " + join(suite_keys()));
    }
    YAML::Node node;
    try {
      node = YAML::Load(assignment.substr(equals + 1));
    } catch (const YAML::Exception& error) {
      fail(0, "the value is no YAML value: " + error.msg);
    }
    const RawField raw{field->key, scalar_from_yaml(node), 0};
    for (const nlohmann::json& value : values_of(raw)) {
      BenchmarkRequest checked;
      try {
        set_requested_field(checked, field->key, value);
      } catch (const UsageError& error) {
        fail(0, error.what());
      }
    }
    return raw;
  }

  // defaults, then the entry's own fields; a list value expands to one request per element.
  // The count is known and checked against `max_benchmarks` before anything is expanded.
  std::vector<SuiteEntry> expand(const RawSuite& suite, int64_t max_benchmarks, bool rehearse,
                                 const RawEntry& overrides) const {
    if (suite.benchmarks.empty()) fail(0, "the suite has no benchmarks");
    if (rehearse && !suite.rehearsal.present) {
      fail(0, "--rehearsal needs a 'rehearsal' section (set, replace) in the suite");
    }
    check_rehearsal_keys(suite.rehearsal);  // a typo fails the real run too, not only a rehearsal
    std::vector<std::pair<RawEntry, int>> merged_entries;
    int64_t total = 0;
    for (const auto& [entry, entry_line] : suite.benchmarks) {
      RawEntry merged = merged_fields(suite.defaults, entry);
      if (rehearse) merged = rehearsed(suite.rehearsal, std::move(merged));
      merged = merged_fields(merged, overrides);
      int64_t count = 1;
      for (const RawField& field : merged) {
        if (field.value.is_array()) {
          count = std::min(count_limit(max_benchmarks),
                           count * static_cast<int64_t>(field.value.size()));
        }
      }
      total = std::min(count_limit(max_benchmarks), total + count);
      if (total > max_benchmarks) {
        fail(entry_line, "the suite expands to more than " + std::to_string(max_benchmarks) +
                             " benchmarks (lists multiply); split it, or raise the limit with "
                             "--max-benchmarks");
      }
      merged_entries.emplace_back(std::move(merged), entry_line);
    }
    std::vector<SuiteEntry> entries;
    entries.reserve(static_cast<size_t>(total));
    for (const auto& [merged, entry_line] : merged_entries) {
      std::vector<BenchmarkRequest> partial{BenchmarkRequest{}};
      for (const RawField& field : merged) {
        std::vector<BenchmarkRequest> next;
        for (const BenchmarkRequest& request : partial) {
          for (const auto& value : values_of(field)) {
            BenchmarkRequest copy = request;
            try {
              set_requested_field(copy, field.key, value);
            } catch (const UsageError& error) {
              fail(field.line, error.what());
            }
            next.push_back(copy);
          }
        }
        partial = std::move(next);
      }
      const std::string origin =
          echoed(name_) + (entry_line > 0 ? ":" + std::to_string(entry_line) : "");
      for (const BenchmarkRequest& request : partial) entries.push_back({request, origin});
    }
    return entries;
  }

 private:
  // Past the limit the exact count does not matter; capping it keeps the product from
  // overflowing.
  static int64_t count_limit(int64_t max_benchmarks) { return max_benchmarks + 1; }

  void check_rehearsal_keys(const RawRehearsal& rehearsal) const {
    for (const auto& [raw, pairs] : rehearsal.replace) {
      const BenchmarkField* field = find_benchmark_field(raw.key);
      if (field == nullptr || !field->suite) {
        fail(raw.line, "unknown key 'rehearsal.replace." + echoed(raw.key) +
                           "'; known: " + join(suite_keys()));
      }
    }
    merged_fields({}, rehearsal.set);
  }

  // An entry as the rehearsal runs it: each value that `replace` maps (a list's elements one by
  // one), then `set` over everything.
  RawEntry rehearsed(const RawRehearsal& rehearsal, RawEntry merged) const {
    for (const auto& [raw, pairs] : rehearsal.replace) {
      const BenchmarkField* field = find_benchmark_field(raw.key);
      const auto replaced = [&pairs = pairs](const nlohmann::json& value) {
        for (const auto& [from, to] : pairs) {
          if (plain_text(value) == from) return to;  // 256 and "256" alike
        }
        return value;
      };
      for (RawField& f : merged) {
        if (f.key != field->key) continue;
        if (!f.value.is_array()) {
          f.value = replaced(f.value);
        } else {
          for (auto& element : f.value) element = replaced(element);
        }
      }
    }
    return merged_fields(merged, rehearsal.set);
  }

  RawEntry merged_fields(const RawEntry& defaults, const RawEntry& entry) const {
    RawEntry merged;
    for (const RawEntry* source : {&defaults, &entry}) {
      std::set<std::string> seen;  // in this mapping; the entry's own keys override the defaults
      for (const RawField& raw : *source) {
        const BenchmarkField* field = find_benchmark_field(raw.key);
        if (field == nullptr || !field->suite) {
          fail(raw.line, "unknown key '" + echoed(raw.key) + "'; known: " + join(suite_keys()));
        }
        if (!seen.insert(field->key).second) fail(raw.line, given_twice(field->key));
        auto existing = std::find_if(merged.begin(), merged.end(),
                                     [&](const RawField& f) { return f.key == field->key; });
        if (existing != merged.end()) {
          *existing = {field->key, raw.value, raw.line};
        } else {
          merged.push_back({field->key, raw.value, raw.line});
        }
      }
    }
    return merged;
  }

  std::vector<nlohmann::json> values_of(const RawField& field) const {
    if (!field.value.is_array()) return {field.value};
    if (field.value.empty())
      fail(field.line, "field '" + echoed(field.key) + "' has an empty list");
    for (const auto& value : field.value) {
      if (value.is_structured()) {
        fail(field.line,
             "field '" + field.key + "': a list may hold values only, got " + echoed(value));
      }
    }
    return {field.value.begin(), field.value.end()};
  }

  static std::string given_twice(const std::string& key) {
    return "key '" + echoed(key) + "' is given twice in one mapping";
  }

  static std::vector<std::string> suite_keys() {
    std::vector<std::string> keys;
    for (const BenchmarkField& f : benchmark_fields()) {
      if (f.suite) keys.push_back(f.key);
    }
    return keys;
  }

  std::string name_;
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<SuiteEntry> parse_suite(const std::string& text, const std::string& name, bool is_json,
                                    int64_t max_benchmarks, bool rehearse,
                                    const std::vector<std::string>& overrides) {
  RawEntry fields;
  for (const std::string& assignment : overrides) {
    const SuiteParser named("--set '" + assignment + "'");
    fields.push_back(named.override_from_text(assignment));
    for (size_t i = 0; i + 1 < fields.size(); ++i) {
      if (fields[i].key == fields.back().key) named.fail(0, "'" + fields[i].key + "' is set twice");
    }
  }
  SuiteParser parser(name);
  return parser.expand(is_json ? parser.from_json(text) : parser.from_yaml(text), max_benchmarks,
                       rehearse, fields);
}

std::vector<SuiteEntry> load_suite_file(const std::string& path, int64_t max_benchmarks,
                                        bool rehearse, const std::vector<std::string>& overrides) {
  return parse_suite(read_input_file(path, "suite file"), path, ends_with(path, ".json"),
                     max_benchmarks, rehearse, overrides);
}

}  // namespace gpubench
