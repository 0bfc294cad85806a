#include "gpubench/benchmark_fields.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "gpubench/errors.h"

namespace gpubench {
namespace {

std::string describe(const nlohmann::json& value) {
  return value.dump();
}

int64_t as_integer(const nlohmann::json& value, const std::string& key) {
  if (!value.is_number_integer()) {
    throw UsageError("field '" + key + "' must be an integer, got " + describe(value));
  }
  return value.get<int64_t>();
}

int as_int(const nlohmann::json& value, const std::string& key) {
  const int64_t number = as_integer(value, key);
  if (number < std::numeric_limits<int>::min() || number > std::numeric_limits<int>::max()) {
    throw UsageError("field '" + key + "' is out of range: " + describe(value));
  }
  return static_cast<int>(number);
}

std::string as_string(const nlohmann::json& value, const std::string& key) {
  if (!value.is_string()) {
    throw UsageError("field '" + key + "' must be a string, got " + describe(value));
  }
  return value.get<std::string>();
}

bool as_bool(const nlohmann::json& value, const std::string& key) {
  if (!value.is_boolean()) {
    throw UsageError("field '" + key + "' must be true or false, got " + describe(value));
  }
  return value.get<bool>();
}

struct Field {
  std::string key;
  std::function<void(BenchmarkSpec&, const nlohmann::json&)> set;
  std::function<std::vector<std::string>(const BenchmarkSpec&)> flags;
};

std::vector<std::string> flag(const std::string& key, const std::string& value) {
  std::string name = key;
  std::replace(name.begin(), name.end(), '_', '-');
  return {"--" + name, value};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      {"model", [](auto& s, const auto& v) { s.model = as_string(v, "model"); },
       [](const auto& s) { return flag("model", s.model); }},
      {"precision",
       [](auto& s, const auto& v) { s.precision = parse_precision(as_string(v, "precision")); },
       [](const auto& s) { return flag("precision", to_string(s.precision)); }},
      {"device", [](auto& s, const auto& v) { s.device = parse_device(as_string(v, "device")); },
       [](const auto& s) { return flag("device", to_string(s.device)); }},
      {"gpus", [](auto& s, const auto& v) { s.gpus = as_int(v, "gpus"); },
       [](const auto& s) { return flag("gpus", std::to_string(s.gpus)); }},
      {"batch_size",
       [](auto& s, const auto& v) {
         s.batch_size = as_integer(v, "batch_size");
         if (s.batch_size <= 0) {
           throw UsageError("batch size must be a positive integer, got " + describe(v));
         }
       },
       [](const auto& s) { return flag("batch_size", std::to_string(s.batch_size)); }},
      {"warmup_steps", [](auto& s, const auto& v) { s.warmup_steps = as_int(v, "warmup_steps"); },
       [](const auto& s) { return flag("warmup_steps", std::to_string(s.warmup_steps)); }},
      {"steps", [](auto& s, const auto& v) { s.steps = as_int(v, "steps"); },
       [](const auto& s) { return flag("steps", std::to_string(s.steps)); }},
      {"repeat", [](auto& s, const auto& v) { s.repeat = as_int(v, "repeat"); },
       [](const auto& s) { return flag("repeat", std::to_string(s.repeat)); }},
      {"seed",
       [](auto& s, const auto& v) {
         const int64_t seed = as_integer(v, "seed");
         if (seed < 0) throw UsageError("field 'seed' must be zero or more, got " + describe(v));
         s.seed = static_cast<uint64_t>(seed);
       },
       [](const auto& s) { return flag("seed", std::to_string(s.seed)); }},
      {"channels_last",
       [](auto& s, const auto& v) { s.channels_last = as_bool(v, "channels_last"); },
       [](const auto& s) {
         if (!s.channels_last) return std::vector<std::string>{};
         return std::vector<std::string>{*s.channels_last ? "--channels-last"
                                                          : "--no-channels-last"};
       }},
      {"tgt_len", [](auto& s, const auto& v) { s.tgt_len = as_integer(v, "tgt_len"); },
       [](const auto& s) { return flag("tgt_len", std::to_string(s.tgt_len)); }},
      {"mem_len", [](auto& s, const auto& v) { s.mem_len = as_integer(v, "mem_len"); },
       [](const auto& s) { return flag("mem_len", std::to_string(s.mem_len)); }},
      {"threads", [](auto& s, const auto& v) { s.threads = as_int(v, "threads"); },
       [](const auto& s) { return flag("threads", std::to_string(s.threads)); }},
      {"bucket_mb", [](auto& s, const auto& v) { s.bucket_mb = as_int(v, "bucket_mb"); },
       [](const auto& s) { return flag("bucket_mb", std::to_string(s.bucket_mb)); }},
  };
  return table;
}

}  // namespace

std::string normalize_field_key(const std::string& key) {
  std::string out = key;
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::vector<std::string> benchmark_field_keys() {
  std::vector<std::string> keys;
  for (const Field& field : fields()) keys.push_back(field.key);
  return keys;
}

bool is_benchmark_field(const std::string& normalized_key) {
  const auto& table = fields();
  return std::any_of(table.begin(), table.end(),
                     [&](const Field& field) { return field.key == normalized_key; });
}

void set_benchmark_field(BenchmarkSpec& spec, const std::string& normalized_key,
                         const nlohmann::json& value) {
  for (const Field& field : fields()) {
    if (field.key == normalized_key) {
      field.set(spec, value);
      return;
    }
  }
  throw UsageError("unknown benchmark field '" + normalized_key +
                   "'; known: " + join(benchmark_field_keys()));
}

std::vector<std::string> to_train_arguments(const BenchmarkSpec& spec) {
  std::vector<std::string> arguments;
  for (const Field& field : fields()) {
    for (auto& argument : field.flags(spec)) arguments.push_back(std::move(argument));
  }
  return arguments;
}

}  // namespace gpubench
