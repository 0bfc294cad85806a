#include "spec/benchmark_fields.h"

#include <algorithm>
#include <limits>

#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_fields.h"

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

struct Shape {
  FieldType type;
  json default_value;
  std::string default_text;
  int64_t min = 0, max = 0;
  std::vector<std::string> choices;
};

template <typename T, typename R>
BenchmarkField field(std::string key, Shape shape, std::string help, bool identity,
                     std::optional<T> BenchmarkRequest::*requested, R ResolvedBenchmark::*resolved,
                     std::function<std::string(const ResolvedBenchmark&)> identity_text = {}) {
  BenchmarkField f;
  f.key = key;
  f.result_key = key;
  f.type = shape.type;
  f.help = std::move(help);
  f.default_value = std::move(shape.default_value);
  f.default_text = shape.default_text.empty() && !f.default_value.is_null()
                       ? (f.default_value.is_string() ? f.default_value.get<std::string>()
                                                      : f.default_value.dump())
                       : shape.default_text;
  f.min = shape.min;
  f.max = shape.max;
  f.choices = std::move(shape.choices);
  f.identity = identity;
  f.requested = [requested](const BenchmarkRequest& r) -> std::optional<json> {
    if (!(r.*requested)) return std::nullopt;
    return Codec<T>::encode(*(r.*requested));
  };
  f.request = [requested](BenchmarkRequest& r, const json& v) {
    r.*requested = Codec<T>::decode(v);
  };
  f.resolved = [resolved](const ResolvedBenchmark& b) { return Codec<R>::encode(b.*resolved); };
  f.resolve = [resolved](ResolvedBenchmark& b, const json& v) {
    b.*resolved = Codec<R>::decode(v);
  };
  f.identity_text = identity_text ? std::move(identity_text)
                                  : [](const ResolvedBenchmark&) { return std::string(); };
  return f;
}

Shape integer(json default_value, int64_t min, int64_t max, std::string default_text = "") {
  return {FieldType::kInteger, std::move(default_value), std::move(default_text), min, max, {}};
}

std::vector<BenchmarkField> make_table() {
  using B = ResolvedBenchmark;
  using R = BenchmarkRequest;
  std::vector<BenchmarkField> table = {
      field("model", {FieldType::kText, "resnet50", "", 0, 0, {}},
            "Model name (see `gpubench models`)", true, &R::model, &B::model,
            [](const B& b) { return b.model; }),
      field("precision", {FieldType::kChoice, "fp32", "", 0, 0, precision_names()},
            "fp32 (TF32 off), tf32, fp16 (AMP + loss scaling), bf16", true, &R::precision,
            &B::precision, [](const B& b) { return to_string(b.precision); }),
      // Part of the identity through the system it names (a GPU, or the CPU).
      field("device", {FieldType::kChoice, "auto", "", 0, 0, device_names()},
            "auto (CUDA when present), cuda or cpu", true, &R::device, &B::device),
      field("gpus", integer(1, 1, 4096),
            "Data-parallel ranks, one process per device (with device cpu: CPU ranks); under "
            "torchrun/srun/mpirun the launcher's world size",
            true, &R::gpus, &B::gpus, [](const B& b) { return "x" + std::to_string(b.gpus); }),
      field("batch_size", integer(nullptr, 1, 1 << 20, "the model's"),
            "Per-device batch size, or max: the largest that trains, found by probing", true,
            &R::batch_size, &B::batch_size,
            [](const B& b) {
              // Published figures whose source gives no batch size record 0.
              return "batch " + (b.batch_size > 0 ? std::to_string(b.batch_size) : "n/a");
            }),
      field("warmup_steps", integer(10, 0, 1000000), "Untimed steps before the first trial", false,
            &R::warmup_steps, &B::warmup_steps),
      field("steps", integer(50, 1, 10000000), "Timed steps per trial", false, &R::steps,
            &B::steps),
      field("repeat", integer(3, 1, 1000), "Trials; the median trial is reported", false,
            &R::repeat, &B::repeat),
      field("seed", integer(42, 0, kNoLimit), "Random seed for weights and synthetic data", false,
            &R::seed, &B::seed),
      field("channels_last",
            {FieldType::kFlag, nullptr, "on for fp16/bf16 convnets on CUDA", 0, 0, {}},
            "NHWC memory format", true, &R::channels_last, &B::channels_last,
            [](const B& b) { return b.channels_last ? std::string("channels-last") : ""; }),
      field("tgt_len", integer(nullptr, 1, 1 << 20, "the model's"),
            "Language models: tokens per segment", true, &R::tgt_len, &B::tgt_len,
            [](const B& b) { return b.tgt_len > 0 ? "tgt " + std::to_string(b.tgt_len) : ""; }),
      field("mem_len", integer(nullptr, 0, 1 << 20, "the model's"),
            "Language models: memory length in tokens", true, &R::mem_len, &B::mem_len,
            [](const B& b) { return b.tgt_len > 0 ? "mem " + std::to_string(b.mem_len) : ""; }),
      field("threads", integer(nullptr, 1, 4096, "logical CPUs / ranks here"),
            "CPU intra-op threads per rank", true, &R::threads, &B::threads,
            [](const B& b) {
              return b.device == DeviceKind::kCpu ? std::to_string(b.threads) + " threads" : "";
            }),
      field("bucket_mb", integer(25, 1, 1 << 16), "Gradient all-reduce bucket size in MiB", true,
            &R::bucket_mb, &B::bucket_mb,
            [](const B& b) {
              return b.gpus > 1 ? "bucket " + std::to_string(b.bucket_mb) + " MiB" : "";
            }),
      field("timeout", integer(300, 1, 7 * 24 * 3600),
            "Seconds a rank waits for its peers (rendezvous, each collective) before the run "
            "fails",
            false, &R::timeout_s, &B::timeout_s),
      field("mode", {FieldType::kChoice, "eager", "", 0, 0, mode_names()},
            "eager, or graph: the whole training step captured once in a CUDA graph after the "
            "warm-up and replayed (CUDA only)",
            true, &R::mode, &B::mode,
            [](const B& b) { return b.mode == Mode::kGraph ? std::string("graph") : ""; }),
      field("telemetry_interval_ms", integer(100, 0, 60000),
            "Milliseconds between power, clock and temperature samples in the timed windows "
            "(NVML on GPUs, RAPL on the CPU); 0 turns telemetry off",
            false, &R::telemetry_interval_ms, &B::telemetry_interval_ms),
      field("seq_len", integer(nullptr, 1, 1 << 20, "the model's"),
            "Fine-tuning models (BERT, Llama): tokens per sequence", true, &R::seq_len, &B::seq_len,
            [](const B& b) { return b.seq_len > 0 ? "seq " + std::to_string(b.seq_len) : ""; }),
      field("tuning", {FieldType::kChoice, "full", "", 0, 0, tuning_names()},
            "full (every parameter trains) or lora (a frozen model with low-rank adapters; "
            "fine-tuning models only)",
            true, &R::tuning, &B::tuning,
            [](const B& b) {
              return b.tuning == Tuning::kLora
                         ? "LoRA r" + std::to_string(b.lora_rank) + " alpha " +
                               std::to_string(b.lora_alpha) + " " + b.lora_targets
                         : "";
            }),
      field("lora_rank", integer(16, 1, 1 << 16), "LoRA: the adapters' rank", true, &R::lora_rank,
            &B::lora_rank),
      field("lora_alpha", integer(32, 1, 1 << 20),
            "LoRA: alpha; the adapters' output is scaled by alpha / rank", true, &R::lora_alpha,
            &B::lora_alpha),
      field("lora_targets", {FieldType::kText, "q,k,v,o", "", 0, 0, {}},
            "LoRA: projections that get adapters, from q,k,v,o,gate,up,down (the model's), or "
            "all-linear",
            true, &R::lora_targets, &B::lora_targets),
      field(
          "activation_checkpointing", {FieldType::kFlag, false, "", 0, 0, {}},
          "Transformer models: recompute each block's activations in backward (less memory, "
          "more time)",
          true, &R::activation_checkpointing, &B::activation_checkpointing,
          [](const B& b) { return b.activation_checkpointing ? std::string("checkpointed") : ""; }),
      field("memory_limit", {FieldType::kByteSize, 0, "none", 0, int64_t{1} << 40, {}},
            "Bytes of tensors a device may hold (4GB, 512M); an allocation beyond fails as out "
            "of memory. What --batch-size max searches under; on the CPU it makes memory limits "
            "testable",
            false, &R::memory_limit, &B::memory_limit),
      field("task", {FieldType::kChoice, "train", "", 0, 0, task_names()},
            "train, or infer: forward passes as served (and text generation for the models "
            "that generate); `gpubench infer` sets it",
            true, &R::task, &B::task,
            [](const B& b) { return b.task == Task::kInfer ? std::string("inference") : ""; }),
      field("prompt_len", integer(nullptr, 1, 1 << 20, "512 for the models that generate"),
            "infer, models that generate text: prompt tokens (the prefill)", true, &R::prompt_len,
            &B::prompt_len,
            [](const B& b) {
              return b.prompt_len > 0 ? "prompt " + std::to_string(b.prompt_len) : "";
            }),
      field("gen_len", integer(nullptr, 1, 1 << 20, "128 for the models that generate"),
            "infer, models that generate text: tokens generated after the prompt, one at a time "
            "(the decode)",
            true, &R::gen_len, &B::gen_len,
            [](const B& b) { return b.gen_len > 0 ? "gen " + std::to_string(b.gen_len) : ""; }),
      field("deterministic", {FieldType::kFlag, false, "", 0, 0, {}},
            "Deterministic algorithms: cuDNN's deterministic convolutions without autotuning, "
            "cuBLAS's fixed workspace; slower, for comparing two runs' losses",
            true, &R::deterministic, &B::deterministic,
            [](const B& b) { return b.deterministic ? std::string("deterministic") : ""; }),
  };
  for (BenchmarkField& f : table) {
    // 0 (or empty): the setting does not apply, as the LoRA settings of a full fine-tune.
    if (f.key == "tgt_len" || f.key == "seq_len" || f.key.rfind("lora_", 0) == 0 ||
        f.key == "prompt_len" || f.key == "gen_len") {
      f.zero_means_none = true;
    }
    if (f.key == "model") f.short_flag = "-m";
    if (f.key == "task") f.command_line = false;
    if (f.key == "precision") f.short_flag = "-p";
    if (f.key == "batch_size") {
      f.short_flag = "-b";
      f.zero_means_none = true;
      f.result_key = "batch_size_per_device";
      f.named_values = {{"max", kSearchBatchSize}};
    }
  }
  return table;
}

}  // namespace

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

}  // namespace gpubench
