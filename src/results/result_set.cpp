#include "results/result_set.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/log.h"
#include "results/start_time.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace fs = std::filesystem;

namespace {

std::string selector_value(const Result& r, const std::string& key) {
  if (key == "gpu") return system_name(r);
  if (key == "hostname") return r.system.hostname;
  // A run of its model's own optimiser records none in its benchmark (so that it is one
  // benchmark with a run that names it); the optimiser that ran is the first word of the
  // recipe the result describes ("SGD momentum 0.9, ..." is sgd).
  if (key == "optimizer" && r.benchmark.optimizer.empty()) {
    std::string name = r.optimizer.substr(0, r.optimizer.find(' '));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name;
  }
  const nlohmann::json value = find_benchmark_field(key)->resolved(r.benchmark);
  return plain_text(value);
}

}  // namespace

namespace {

[[noreturn]] void unreadable(const std::string& path, const std::error_code& error) {
  throw UsageError("cannot read '" + echoed(path) + "': " + error.message());
}

// Every *.json under `directory`, following no directory link (so no link loop), each error
// (an unreadable folder, a dangling or looping link) naming its path.
std::vector<std::string> result_files_under(const std::string& directory) {
  std::vector<std::string> found;
  std::error_code error;
  fs::recursive_directory_iterator it(directory, error), end;
  if (error) unreadable(directory, error);
  while (it != end) {
    // The entry the next step descends into: what to name when that step fails.
    const std::string current = it->path().string();
    if (it->path().extension() == ".json") {
      const bool regular = it->is_regular_file(error);
      if (error) unreadable(current, error);
      if (regular) found.push_back(current);
    }
    it.increment(error);
    if (error) unreadable(current, error);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// What a folder's reader passes over, by kind: a profiler's Chrome trace (`--profile` into a
// results folder; JSON with traceEvents and no schema) and gpubench's own documents that are no
// result, each with a schema "gpubench.<kind>/<version>" (a fit's prediction, a scale prediction,
// an all-reduce sweep, a child's benchmark, the trend and report JSON the nightly job writes
// beside its results). A file named on the command line is still read as a result, and refused
// as one.
std::string kind_of_non_result(const nlohmann::json& document) {
  if (!document.is_object()) return "";
  if (!document.contains("schema")) return document.contains("traceEvents") ? "profiler trace" : "";
  const nlohmann::json& schema = document["schema"];
  if (!schema.is_string()) return "";
  const std::string& name = schema.get_ref<const std::string&>();
  static const std::pair<const char*, const char*> kNamedDocuments[] = {
      {"gpubench.fit/", "fit prediction"},
      {"gpubench.scale/", "scale prediction"},
      {"gpubench.allreduce/", "all-reduce sweep"},
      {"gpubench.benchmark/", "benchmark description"},
      {"gpubench.trend/", "trend"},
      {"gpubench.report/", "report"}};
  for (const auto& [prefix, kind] : kNamedDocuments) {
    if (name.rfind(prefix, 0) == 0) return kind;
  }
  // Any other of gpubench's own (gpubench.scale-tp/1, ...), but never a result of another version,
  // which reading refuses with what it is.
  const std::string ours = "gpubench.";
  const size_t slash = name.find('/');
  if (name.rfind(ours, 0) != 0 || slash == std::string::npos || slash == ours.size() ||
      name.rfind("gpubench.result/", 0) == 0) {
    return "";
  }
  return name.substr(0, slash) + " document";
}

struct ResultFile {
  std::string path;
  bool found_in_folder = false;
};

}  // namespace

std::vector<LoadedResult> load_results(const std::vector<std::string>& paths) {
  if (paths.empty()) throw UsageError("no result files or directories given");
  std::vector<ResultFile> files;
  for (const std::string& path : paths) {
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (fs::is_directory(status)) {
      for (std::string& found : result_files_under(path)) files.push_back({std::move(found), true});
    } else if (fs::exists(status)) {
      files.push_back({path});  // reading it says what is wrong with it, if anything
    } else if (error && error != std::errc::no_such_file_or_directory) {
      unreadable(path, error);
    } else {
      throw UsageError("no result file or directory '" + echoed(path) + "'");
    }
  }
  std::vector<LoadedResult> results;
  results.reserve(files.size());
  std::map<std::string, int> skipped;  // by kind
  for (const ResultFile& file : files) {
    const nlohmann::json document = read_json_input_file(file.path, "result file");
    if (file.found_in_folder) {
      const std::string kind = kind_of_non_result(document);
      if (!kind.empty()) {
        ++skipped[kind];
        continue;
      }
    }
    results.push_back({result_from_file_json(document, file.path), file.path});
  }
  if (!skipped.empty()) {
    std::vector<std::string> counts;
    for (const auto& [kind, count] : skipped)
      counts.push_back(std::to_string(count) + " " + kind + "(s)");
    log::warn("skipped {} in the folders given: not results", join(counts));
  }
  if (results.empty()) throw UsageError("no result files (*.json) under " + echoed(join(paths)));
  return results;
}

const Result* newest_result(const std::vector<const Result*>& candidates) {
  const Result* best = nullptr;
  for (const Result* r : candidates) {
    if (best == nullptr) {
      best = r;
      continue;
    }
    const bool r_has = has_throughput(r->status), best_has = has_throughput(best->status);
    if (r_has == best_has) warn_if_tied(*r, *best);
    if ((r_has && !best_has) || (r_has == best_has && started_before(*best, *r))) best = r;
  }
  return best;
}

std::string system_name(const Result& result) {
  const bool on_gpu = result.benchmark.device != DeviceKind::kCpu;
  if (on_gpu && !result.system.gpu_name.empty()) return result.system.gpu_name;
  return "CPU (" + (result.system.cpu.empty() ? std::string("unknown") : result.system.cpu) + ")";
}

std::string system_label(const Result& result) {
  return system_name(result) + " x" + std::to_string(result.benchmark.gpus);
}

std::string BenchmarkIdentity::settings_text(const std::vector<std::string>& leave_out) const {
  std::vector<std::string> texts;
  for (const auto& [key, text] : settings) {
    if (std::find(leave_out.begin(), leave_out.end(), key) == leave_out.end()) {
      texts.push_back(text);
    }
  }
  return join(texts, " ");
}

std::string BenchmarkIdentity::text() const {
  return settings_text() + " on " + system;
}

std::string BenchmarkIdentity::values_text(const std::vector<std::string>& leave_out) const {
  nlohmann::json kept = values;
  for (const std::string& key : leave_out) kept.erase(key);
  return kept.dump();
}

BenchmarkIdentity identity_of(const Result& result) {
  return {identity_settings(result.benchmark), identity_values(result.benchmark),
          system_name(result)};
}

IdentityKey identity_key(const Result& result) {
  const BenchmarkIdentity identity = identity_of(result);
  return {identity.text(), identity.match()};
}

std::vector<std::string> selector_keys() {
  std::vector<std::string> keys = {"gpu", "hostname"};
  for (const BenchmarkField& f : benchmark_fields()) {
    if (f.identity) keys.push_back(f.key);
  }
  return keys;
}

std::vector<LoadedResult> select_results(std::vector<LoadedResult> results,
                                         const std::string& selector) {
  if (selector.empty()) return results;
  const ResultSelector parsed = ResultSelector::parse(selector);
  std::vector<LoadedResult> kept;
  for (LoadedResult& l : results) {
    if (parsed.matches(l.result)) kept.push_back(std::move(l));
  }
  if (kept.empty()) throw UsageError("--select '" + echoed(selector) + "' matches no result");
  return kept;
}

bool looks_like_selector(const std::string& text) {
  std::error_code error;
  return text.find('=') != std::string::npos && !fs::exists(text, error);
}

ResultSelector ResultSelector::parse(const std::string& text) {
  ResultSelector selector;
  selector.text_ = text;
  const std::vector<std::string> known = selector_keys();
  size_t i = 0;
  while (i < text.size()) {
    const size_t equals = text.find('=', i);
    if (equals == std::string::npos) {
      throw UsageError("selector '" + echoed(text) + "': expected key=value, got '" +
                       echoed(text.substr(i)) + "'");
    }
    std::string key = text.substr(i, equals - i);
    key.erase(0, key.find_first_not_of(' '));
    key.erase(key.find_last_not_of(' ') + 1);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw UsageError("unknown selector key '" + echoed(key) + "'; known: " + join(known));
    }
    std::string value;
    i = equals + 1;
    if (i < text.size() && text[i] == '"') {
      const size_t close = text.find('"', i + 1);
      if (close == std::string::npos) {
        throw UsageError("selector '" + echoed(text) + "': unterminated quote");
      }
      value = text.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      const size_t comma = text.find(',', i);
      value = text.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
      i = comma == std::string::npos ? text.size() : comma;
    }
    if (i < text.size()) {
      if (text[i] != ',') {
        throw UsageError("selector '" + echoed(text) + "': expected ',' after " + key);
      }
      ++i;
    }
    if (selector.fields_.count(key) > 0) {
      throw UsageError("selector '" + echoed(text) + "' gives " + key +
                       " twice; a result has one " + key);
    }
    // A benchmark setting's value is checked and made canonical as the command line's is
    // ("gpus=-1" is refused, "gpus=04" is gpus 4), not left to match nothing.
    if (const BenchmarkField* field = find_benchmark_field(key);
        field != nullptr && key != "model") {
      value = plain_text(field_value_from_text(*field, value));
    }
    selector.fields_[key] = value;
  }
  if (selector.fields_.empty()) throw UsageError("empty selector");
  return selector;
}

bool ResultSelector::matches(const Result& result) const {
  return std::all_of(fields_.begin(), fields_.end(), [&](const auto& field) {
    return selector_value(result, field.first) == field.second;
  });
}

}  // namespace gpubench
