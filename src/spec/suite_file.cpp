#include "spec/suite_file.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "spec/benchmark_fields.h"

namespace gpubench {
namespace {

// A field as written in the file, with its line (0 where the parser gives none).
struct RawField {
  std::string key;
  nlohmann::json value;
  int line = 0;
};
using RawEntry = std::vector<RawField>;

struct RawSuite {
  RawEntry defaults;
  std::vector<std::pair<RawEntry, int>> benchmarks;  // entry and its line
};

class SuiteParser {
 public:
  explicit SuiteParser(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(int line, const std::string& message) const {
    throw UsageError(name_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + message);
  }

  RawEntry entry_from_json(const nlohmann::json& object, const std::string& where) const {
    if (!object.is_object()) fail(0, where + " must be a mapping of benchmark fields");
    RawEntry entry;
    for (const auto& [key, value] : object.items()) entry.push_back({key, value, 0});
    return entry;
  }

  RawSuite from_json(const std::string& text) const {
    nlohmann::json document;
    try {
      document = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& error) {
      const auto byte = std::min<size_t>(error.byte, text.size());
      const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + byte, '\n'));
      const std::string what = error.what();
      fail(line, "malformed JSON: " + what.substr(what.find(':') + 2));
    }
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
      } else if (key != "name" && key != "description") {
        fail(0, "unknown top-level key '" + key +
                    "'; allowed: defaults, benchmarks, name, description");
      }
    }
    return suite;
  }

  nlohmann::json scalar_from_yaml(const YAML::Node& node) const {
    if (node.IsSequence()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : node) list.push_back(scalar_from_yaml(item));
      return list;
    }
    if (!node.IsScalar())
      fail(line_of(node), "a benchmark field must be a value or a list of values");
    const std::string text = node.Scalar();
    if (node.Tag() == "!") return text;  // quoted: always a string
    if (text == "true" || text == "True") return true;
    if (text == "false" || text == "False") return false;
    try {
      size_t used = 0;
      const long long number = std::stoll(text, &used);
      if (used == text.size()) return number;
      const double real = std::stod(text, &used);
      if (used == text.size()) return real;
    } catch (const std::exception&) {
    }
    return text;
  }

  static int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

  RawEntry entry_from_yaml(const YAML::Node& node, const std::string& where) const {
    if (!node.IsMap()) fail(line_of(node), where + " must be a mapping of benchmark fields");
    RawEntry entry;
    for (const auto& item : node) {
      entry.push_back(
          {item.first.as<std::string>(), scalar_from_yaml(item.second), line_of(item.first)});
    }
    return entry;
  }

  RawSuite from_yaml(const std::string& text) const {
    YAML::Node document;
    try {
      document = YAML::Load(text);
    } catch (const YAML::Exception& error) {
      fail(error.mark.line + 1, "malformed YAML: " + error.msg);
    }
    if (!document.IsMap()) fail(0, "a suite must be a mapping with 'benchmarks'");
    RawSuite suite;
    for (const auto& item : document) {
      const std::string key = item.first.as<std::string>();
      if (key == "defaults") {
        suite.defaults = entry_from_yaml(item.second, "'defaults'");
      } else if (key == "benchmarks") {
        if (!item.second.IsSequence()) fail(line_of(item.first), "'benchmarks' must be a list");
        for (const auto& entry : item.second) {
          suite.benchmarks.push_back({entry_from_yaml(entry, "each benchmark"), line_of(entry)});
        }
      } else if (key != "name" && key != "description") {
        fail(line_of(item.first), "unknown top-level key '" + key +
                                      "'; allowed: defaults, benchmarks, name, description");
      }
    }
    return suite;
  }

  // defaults, then the entry's own fields; a list value expands to one request per element.
  std::vector<SuiteEntry> expand(const RawSuite& suite) const {
    if (suite.benchmarks.empty()) fail(0, "the suite has no benchmarks");
    std::vector<SuiteEntry> entries;
    for (const auto& [entry, entry_line] : suite.benchmarks) {
      RawEntry merged;
      for (const RawEntry* source : {&suite.defaults, &entry}) {
        for (const RawField& raw : *source) {
          const BenchmarkField* field = find_benchmark_field(raw.key);
          if (field == nullptr || !field->suite) {
            fail(raw.line, "unknown key '" + raw.key + "'; known: " + join(suite_keys()));
          }
          auto existing = std::find_if(merged.begin(), merged.end(),
                                       [&](const RawField& f) { return f.key == field->key; });
          if (existing != merged.end()) {
            *existing = {field->key, raw.value, raw.line};
          } else {
            merged.push_back({field->key, raw.value, raw.line});
          }
        }
      }
      std::vector<BenchmarkRequest> partial{BenchmarkRequest{}};
      for (const RawField& field : merged) {
        std::vector<nlohmann::json> values;
        if (field.value.is_array()) {
          if (field.value.empty()) fail(field.line, "field '" + field.key + "' has an empty list");
          values.assign(field.value.begin(), field.value.end());
        } else {
          values.push_back(field.value);
        }
        std::vector<BenchmarkRequest> next;
        for (const BenchmarkRequest& request : partial) {
          for (const auto& value : values) {
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
      const std::string origin = name_ + (entry_line > 0 ? ":" + std::to_string(entry_line) : "");
      for (const BenchmarkRequest& request : partial) entries.push_back({request, origin});
    }
    return entries;
  }

 private:
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

std::vector<SuiteEntry> parse_suite(const std::string& text, const std::string& name,
                                    bool is_json) {
  SuiteParser parser(name);
  return parser.expand(is_json ? parser.from_json(text) : parser.from_yaml(text));
}

std::vector<SuiteEntry> load_suite_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read suite file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), path, ends_with(path, ".json"));
}

}  // namespace gpubench
