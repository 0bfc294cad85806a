#include "settings/benchmark_fields.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_fields.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "settings/setting_order.h"

namespace gpubench {
namespace {

using nlohmann::json;

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

// How a member's C++ type travels as JSON.
template <typename T>
struct Codec {
  static json encode(const T& value) { return value; }
  static T decode(const json& value) { return value.get<T>(); }
};
template <>
struct Codec<Precision> {
  static json encode(Precision value) { return to_string(value); }
  static Precision decode(const json& value) { return parse_precision(value.get<std::string>()); }
};
template <>
struct Codec<Mode> {
  static json encode(Mode value) { return to_string(value); }
  static Mode decode(const json& value) { return parse_mode(value.get<std::string>()); }
};
template <>
struct Codec<Tuning> {
  static json encode(Tuning value) { return to_string(value); }
  static Tuning decode(const json& value) { return parse_tuning(value.get<std::string>()); }
};
template <>
struct Codec<Task> {
  static json encode(Task value) { return to_string(value); }
  static Task decode(const json& value) { return parse_task(value.get<std::string>()); }
};
template <>
struct Codec<DeviceKind> {
  static json encode(DeviceKind value) { return to_string(value); }
  static DeviceKind decode(const json& value) { return parse_device(value.get<std::string>()); }
};

using B = ResolvedBenchmark;
using S = SettingSection;
using IdentityText = std::function<std::string(const B&)>;
using Applies = std::function<bool(const B&)>;

// One entry of settings/benchmark_settings.def: a BenchmarkField made with chained setters.
class Setting {
 public:
  explicit Setting(std::string key) {
    field_.key = key;
    field_.result_key = std::move(key);
  }
  // The value's kind and default; a null default is decided by resolve(), as `decided_by` says.
  Setting& text(json default_value, std::string decided_by = "") {
    return kind(FieldType::kText, std::move(default_value), std::move(decided_by));
  }
  Setting& flag(json default_value, std::string decided_by = "") {
    return kind(FieldType::kFlag, std::move(default_value), std::move(decided_by));
  }
  Setting& choice(json default_value, std::vector<std::string> choices) {
    field_.choices = std::move(choices);
    return kind(FieldType::kChoice, std::move(default_value));
  }
  Setting& integer(json default_value, int64_t min, int64_t max, std::string decided_by = "") {
    field_.min = min;
    field_.max = max;
    return kind(FieldType::kInteger, std::move(default_value), std::move(decided_by));
  }
  Setting& byte_size(json default_value, std::string default_text, int64_t max) {
    field_.max = max;
    return kind(FieldType::kByteSize, std::move(default_value), std::move(default_text));
  }
  Setting& named_value(std::string word, int64_t value) {
    field_.named_values.emplace_back(std::move(word), value);
    return *this;
  }
  Setting& short_flag(std::string flag) {
    field_.short_flag = std::move(flag);
    return *this;
  }
  // The commands it is an option of, where its section's are not (CommandUse).
  Setting& used_by(unsigned commands) {
    field_.used_by = commands;
    return *this;
  }
  Setting& result_key(std::string key) {
    field_.result_key = std::move(key);
    return *this;
  }
  Setting& zero_means_none() {
    field_.zero_means_none = true;
    return *this;
  }
  Setting& not_an_option() {
    field_.command_line = false;
    return *this;
  }
  Setting& help(std::string text) {
    field_.help = std::move(text);
    return *this;
  }
  // Part of the benchmark's identity, with its text in a row's setup (none: it says nothing
  // there of its own).
  Setting& identity(IdentityText text = {}) {
    field_.identity = true;
    if (text) field_.identity_text = std::move(text);
    return *this;
  }
  // Where its value counts in the identity beyond its section's condition (the bucket size with
  // several ranks); unset: wherever its section's holds. Its identity text is empty elsewhere.
  Setting& applies(Applies predicate) {
    field_.applies = std::move(predicate);
    return *this;
  }
  // The member's section is the struct that declares it.
  template <typename T, typename Section>
  BenchmarkField bind(std::optional<T> BenchmarkRequest::*requested, T Section::*member) {
    BenchmarkField f = std::move(field_);
    f.section = Section::kSection;
    T B::*resolved = member;
    f.applies = [section = section_info(f.section).applies,
                 own = std::move(f.applies)](const B& b) { return section(b) && own(b); };
    f.identity_text = [applies = f.applies, text = std::move(f.identity_text)](const B& b) {
      return applies(b) ? text(b) : std::string();
    };
    f.requested = [requested](const BenchmarkRequest& r) -> std::optional<json> {
      if (!(r.*requested)) return std::nullopt;
      return Codec<T>::encode(*(r.*requested));
    };
    f.request = [requested](BenchmarkRequest& r, const json& v) {
      r.*requested = Codec<T>::decode(v);
    };
    f.resolved = [resolved](const B& b) { return Codec<T>::encode(b.*resolved); };
    f.resolve = [resolved](B& b, const json& v) { b.*resolved = Codec<T>::decode(v); };
    return f;
  }

 private:
  Setting& kind(FieldType type, json default_value, std::string default_text = "") {
    field_.type = type;
    if (default_text.empty() && !default_value.is_null()) {
      default_text = plain_text(default_value);
    }
    field_.default_value = std::move(default_value);
    field_.default_text = std::move(default_text);
    return *this;
  }

  BenchmarkField field_;
};

bool always(const B&) {
  return true;
}

std::vector<SettingSectionInfo> make_sections() {
  return {
      {S::kModel, "model", "what runs: the model, its batch and layout, train or infer", always},
      {S::kMeasurement, "measurement", "how long and how often it is timed", always,
       kUsedByTrain | kUsedByInfer},
      {S::kPrecision, "precision", "the number formats it computes in", always},
      {S::kParallelism, "parallelism", "ranks, their gradient buckets, threads", always},
      {S::kSequence, "sequence", "the token models' lengths", always},
      {S::kDetection, "detection", "the detection models' synthetic objects", always},
      {S::kFineTuning, "fine-tuning", "what trains and how: the recipe, the optimiser, blocks",
       always, kUsedByTrain | kUsedByFit},
      {S::kLora, "lora", "LoRA's adapters, where the tuning is lora or qlora",
       [](const B& b) { return uses_lora(b.tuning); }, kUsedByTrain | kUsedByFit},
      {S::kInference, "inference",
       "infer's requests and its key/value cache, where the task is infer",
       [](const B& b) { return b.task == Task::kInfer; }, kUsedByInfer | kUsedByFit},
      {S::kMemory, "memory", "the bytes a device may hold", always, kUsedByTrain | kUsedByInfer},
      {S::kObservability, "observability", "what is recorded beside the figures", always,
       kUsedByTrain | kUsedByInfer},
  };
}

// A row's place in kSettingOrder; a key missing there is a programming error.
size_t place_in_order(const BenchmarkField& field) {
  const auto place = std::find(std::begin(kSettingOrder), std::end(kSettingOrder), field.key);
  if (place == std::end(kSettingOrder)) {
    throw std::logic_error("setting " + field.key + " has no place in settings/setting_order.h");
  }
  return static_cast<size_t>(place - std::begin(kSettingOrder));
}

std::vector<BenchmarkField> make_table() {
  std::vector<BenchmarkField> table;
#define GPUBENCH_SETTING(section, member, type, ...) \
  table.push_back((__VA_ARGS__).bind<type>(&BenchmarkRequest::member, &B::member));
#include "settings/benchmark_settings.def"
#undef GPUBENCH_SETTING
  if (table.size() != std::size(kSettingOrder)) {
    throw std::logic_error("settings/setting_order.h names " +
                           std::to_string(std::size(kSettingOrder)) + " settings, the rows " +
                           std::to_string(table.size()));
  }
  std::sort(table.begin(), table.end(), [](const BenchmarkField& a, const BenchmarkField& b) {
    return place_in_order(a) < place_in_order(b);
  });
  return table;
}

}  // namespace

const std::vector<SettingSectionInfo>& setting_sections() {
  static const std::vector<SettingSectionInfo> sections = make_sections();
  return sections;
}

const SettingSectionInfo& section_info(SettingSection section) {
  for (const SettingSectionInfo& info : setting_sections()) {
    if (info.section == section) return info;
  }
  throw std::logic_error("a setting section without an entry in setting_sections()");
}

bool BenchmarkField::shown_by(CommandUse command) const {
  return ((used_by != 0 ? used_by : section_info(section).used_by) & command) != 0;
}

std::string describe_rule(const BenchmarkField& f) {
  switch (f.type) {
    case FieldType::kText:
      return "a non-empty string";
    case FieldType::kFlag:
      return "true or false";
    case FieldType::kChoice:
      return "one of " + join(f.choices);
    case FieldType::kByteSize:
      return "a byte count such as 4GB, 512M or 80GiB";
    case FieldType::kInteger:
      break;
  }
  std::string named;
  for (const auto& [word, value] : f.named_values) named += ", or " + word;
  if (!named.empty())
    return "an integer from " + std::to_string(f.min) + " to " + std::to_string(f.max) + named;
  if (f.max == kNoLimit) return f.min == 1 ? "a positive integer" : "zero or more";
  return "an integer from " + std::to_string(f.min) + " to " + std::to_string(f.max);
}

namespace {

[[noreturn]] void reject(const BenchmarkField& f, const std::string& shown) {
  throw UsageError(f.key + " must be " + describe_rule(f) + ", got " + shown);
}

// What a value read back from a result may be: what a request may be, and 0 where the field
// records "none" as 0.
enum class Bounds { kRequest, kRecorded };

json checked_value(const BenchmarkField& f, const json& value, Bounds bounds) {
  switch (f.type) {
    case FieldType::kText:
      if (!value.is_string()) reject(f, echoed(value));
      if (value.get<std::string>().empty() && !(bounds == Bounds::kRecorded && f.zero_means_none)) {
        reject(f, echoed(value));
      }
      return value;
    case FieldType::kFlag:
      if (!value.is_boolean()) reject(f, echoed(value));
      return value;
    case FieldType::kChoice:
      if (!value.is_string()) reject(f, echoed(value));
      if (value.get<std::string>().empty() && bounds == Bounds::kRecorded && f.zero_means_none) {
        return value;
      }
      if (std::find(f.choices.begin(), f.choices.end(), value.get<std::string>()) ==
          f.choices.end()) {
        reject(f, "'" + echoed(value.get<std::string>()) + "'");
      }
      return value;
    case FieldType::kByteSize:
      if (value.is_string()) {
        try {
          return parse_byte_size(value.get<std::string>(), f.key);
        } catch (const UsageError&) {
          reject(f, "'" + echoed(value.get<std::string>()) + "'");
        }
      }
      break;
    case FieldType::kInteger:
      break;
  }
  for (const auto& [word, named] : f.named_values) {
    if ((value.is_string() && value.get<std::string>() == word) ||
        json_int64(value) == std::optional<int64_t>(named)) {
      return named;
    }
  }
  const std::optional<int64_t> read = json_int64(value);
  if (!read) reject(f, echoed(value));
  const int64_t number = *read;
  const bool not_given = bounds == Bounds::kRecorded && f.zero_means_none && number == 0;
  if (!not_given && (number < f.min || number > f.max)) reject(f, std::to_string(number));
  return number;
}

}  // namespace

std::string BenchmarkField::long_flag() const {
  std::string name = key;
  std::replace(name.begin(), name.end(), '_', '-');
  return "--" + name;
}

const std::vector<BenchmarkField>& benchmark_fields() {
  static const std::vector<BenchmarkField> table = make_table();
  return table;
}

std::vector<std::string> benchmark_field_keys() {
  std::vector<std::string> keys;
  for (const BenchmarkField& f : benchmark_fields()) keys.push_back(f.key);
  return keys;
}

const BenchmarkField* find_benchmark_field(const std::string& key) {
  std::string normalized = key;
  std::replace(normalized.begin(), normalized.end(), '-', '_');
  for (const BenchmarkField& f : benchmark_fields()) {
    if (f.key == normalized) return &f;
  }
  return nullptr;
}

json check_field_value(const BenchmarkField& field, const json& value) {
  return checked_value(field, value, Bounds::kRequest);
}

json field_value_from_text(const BenchmarkField& field, const std::string& text) {
  switch (field.type) {
    case FieldType::kText:
    case FieldType::kChoice:
    case FieldType::kByteSize:
      return check_field_value(field, text);
    case FieldType::kFlag:
      if (text == "true" || text == "1" || text == "yes") return true;
      if (text == "false" || text == "0" || text == "no") return false;
      reject(field, "'" + echoed(text) + "'");
    case FieldType::kInteger:
      break;
  }
  for (const auto& [word, named] : field.named_values) {
    if (text == word) return named;
  }
  size_t used = 0;
  long long number = 0;
  try {
    number = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) reject(field, "'" + echoed(text) + "'");
  return check_field_value(field, static_cast<int64_t>(number));
}

void set_requested_field(BenchmarkRequest& request, const std::string& key, const json& value) {
  const BenchmarkField* f = find_benchmark_field(key);
  if (f == nullptr) {
    throw UsageError("unknown benchmark setting '" + echoed(key) +
                     "'; known: " + join(benchmark_field_keys()));
  }
  f->request(request, check_field_value(*f, value));
}

ResolvedBenchmark with_fixed_defaults(const BenchmarkRequest& request) {
  ResolvedBenchmark resolved;
  for (const BenchmarkField& f : benchmark_fields()) {
    const std::optional<json> value = f.requested(request);
    if (value) {
      f.resolve(resolved, *value);
    } else if (!f.default_value.is_null()) {
      f.resolve(resolved, f.default_value);
    }
  }
  return resolved;
}

json benchmark_to_json(const ResolvedBenchmark& benchmark) {
  json block = json::object();
  for (const BenchmarkField& f : benchmark_fields()) block[f.result_key] = f.resolved(benchmark);
  return block;
}

ResolvedBenchmark benchmark_from_json(const json& block) {
  if (!block.is_object()) throw UsageError("a benchmark must be a JSON object");
  ResolvedBenchmark benchmark;
  for (const BenchmarkField& f : benchmark_fields()) {
    const auto it = block.find(f.result_key);
    if (it != block.end()) {
      f.resolve(benchmark, checked_value(f, *it, Bounds::kRecorded));
    } else if (!f.default_value.is_null()) {
      f.resolve(benchmark, f.default_value);
    }
  }
  // An older result has no LoRA settings; a full fine-tune records none (as resolve() does).
  if (benchmark.tuning == Tuning::kFull) {
    benchmark.lora_rank = 0;
    benchmark.lora_alpha = 0;
    benchmark.lora_targets.clear();
  }
  if (benchmark.precision != Precision::kFp8) benchmark.fp8_recipe.clear();
  if (benchmark.weights != "int4") benchmark.weight_group = 0;
  return benchmark;
}

void write_benchmark_file(const std::string& path, const ResolvedBenchmark& benchmark) {
  write_json_atomically(
      path, {{"schema", kBenchmarkSchema}, {"benchmark", benchmark_to_json(benchmark)}});
}

ResolvedBenchmark read_benchmark_file(const std::string& path) {
  const json document = read_json_input_file(path, "benchmark file");
  if (!document.is_object() || document.value("schema", json()) != kBenchmarkSchema) {
    throw UsageError("'" + echoed(path) + "' is not a " + std::string(kBenchmarkSchema) +
                     " document");
  }
  const auto block = document.find("benchmark");
  if (block == document.end() || !block->is_object()) {
    throw UsageError("'" + echoed(path) + "' has no benchmark object");
  }
  for (const BenchmarkField& f : benchmark_fields()) {
    if (!block->contains(f.result_key)) {
      throw UsageError("'" + echoed(path) + "' has no '" + f.result_key + "'");
    }
  }
  for (const auto& [key, value] : block->items()) {
    const bool known =
        std::any_of(benchmark_fields().begin(), benchmark_fields().end(),
                    [&key = key](const BenchmarkField& f) { return f.result_key == key; });
    if (!known) {
      throw UsageError("'" + echoed(path) + "' has an unknown setting '" + echoed(key) +
                       "'; a benchmark file holds exactly the settings of gpubench's field table");
    }
  }
  try {
    return benchmark_from_json(*block);
  } catch (const UsageError& error) {
    throw UsageError("'" + echoed(path) + "': " + error.what());
  }
}

BenchmarkRequest request_from(const ResolvedBenchmark& benchmark) {
  BenchmarkRequest request;
  for (const BenchmarkField& f : benchmark_fields()) {
    const json value = f.resolved(benchmark);
    const bool none =
        f.zero_means_none && ((value.is_number() && value.get<double>() == 0) ||
                              (value.is_string() && value.get<std::string>().empty()));
    // mem_len 0 is a memory length for a language model, and "does not apply" for the others.
    if (none || (f.key == "mem_len" && benchmark.tgt_len == 0)) continue;
    f.request(request, value);
  }
  return request;
}

std::string first_difference(const ResolvedBenchmark& a, const ResolvedBenchmark& b) {
  for (const BenchmarkField& f : benchmark_fields()) {
    const json va = f.resolved(a), vb = f.resolved(b);
    if (va != vb) return f.key + ": " + echoed(va) + ", resolved: " + echoed(vb);
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> identity_settings(const ResolvedBenchmark& b) {
  std::vector<std::pair<std::string, std::string>> settings;
  for (const BenchmarkField& f : benchmark_fields()) {
    if (!f.identity) continue;
    std::string text = f.identity_text(b);
    if (!text.empty()) settings.emplace_back(f.key, std::move(text));
  }
  return settings;
}

nlohmann::json identity_values(const ResolvedBenchmark& b) {
  json values = json::object();
  for (const BenchmarkField& f : benchmark_fields()) {
    if (f.identity && f.applies(b)) values[f.key] = f.resolved(b);
  }
  return values;
}

}  // namespace gpubench
