#include "run/resolve_benchmark.h"

#include <algorithm>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "modeling/adapted_linear.h"
#include "modeling/integer_weights.h"
#include "modeling/model_registry.h"
#include "modeling/mxfp4_weights.h"
#include "optim/optimizer_registry.h"
#include "run/graph_mode.h"
#include "run/precision_policy.h"
#include "spec/benchmark_fields.h"
#include "torch_support/compat.h"
#include "torch_support/vision_ops.h"

namespace gpubench {
namespace {

// CPU ranks and threads past this many per logical CPU only queue for the cores (and a typo's
// million ranks would fork until the kernel refuses).
constexpr int kMaxPerLogicalCpu = 4;
constexpr int kInt4ComputeCapability = 80;  // tinygemm's int4 kernel: Ampere and later

int most_per_machine(const MachineFacts& machine) {
  return kMaxPerLogicalCpu * std::max(1, machine.cpu_cores);
}

std::string logical_cpus(const MachineFacts& machine) {
  return "this machine has " + std::to_string(std::max(1, machine.cpu_cores)) + " logical CPU(s)";
}

void check_machine_bounds(const ResolvedBenchmark& b, const MachineFacts& machine) {
  if (b.threads > most_per_machine(machine)) {
    throw UsageError("threads " + std::to_string(b.threads) + ": " + logical_cpus(machine) +
                     "; at most " + std::to_string(most_per_machine(machine)) +
                     " threads per rank");
  }
}

std::string models_where(const std::function<bool(const ModelCapabilities&)>& holds) {
  return ModelRegistry::instance().names_where(holds);
}

std::string models_with_lora() {
  return models_where([](const ModelCapabilities& can) { return !can.lora_roles.empty(); });
}

std::string sequence_models() {
  return models_where(
      [](const ModelCapabilities& can) { return can.input == SyntheticInput::kTokenSequences; });
}

std::string generating_models() {
  return models_where([](const ModelCapabilities& can) { return can.generates; });
}

std::string tensor_parallel_models() {
  return models_where(
      [](const ModelCapabilities& can) { return !can.tensor_parallel_splits.empty(); });
}

std::string integer_weight_models() {
  return models_where([](const ModelCapabilities& can) { return can.holds_integer_weights(); });
}

// objects_per_image: the detection models', and no other's.
void resolve_objects(const BenchmarkRequest& request, const ModelInfo& info,
                     ResolvedBenchmark& out) {
  if (info.capabilities.input == SyntheticInput::kDetectionImages) {
    out.objects_per_image = request.objects_per_image.value_or(info.default_objects_per_image);
  } else if (request.objects_per_image) {
    throw UsageError("objects_per_image applies to the detection models (" +
                     models_where([](const ModelCapabilities& can) {
                       return can.input == SyntheticInput::kDetectionImages;
                     }) +
                     "), not to '" + info.name + "'");
  }
}

// seq_len, the tuning recipe and activation checkpointing: what the model takes, checked, with
// the LoRA targets in canonical form (the model's role order; every role is "all-linear").
void resolve_fine_tuning(const BenchmarkRequest& request, const ModelInfo& info,
                         ResolvedBenchmark& out) {
  const ModelCapabilities& can = info.capabilities;
  const bool sequences = can.input == SyntheticInput::kTokenSequences;
  if (!sequences && request.seq_len) {
    throw UsageError("seq_len applies to the fine-tuning models (" + sequence_models() +
                     "), not to '" + info.name + "'");
  }
  if (sequences) {
    out.seq_len = request.seq_len.value_or(info.default_seq_len);
    if (info.max_seq_len > 0 && out.seq_len > info.max_seq_len) {
      throw UsageError("seq_len " + std::to_string(out.seq_len) + " is more than " + info.name +
                       "'s " + std::to_string(info.max_seq_len) + " positions");
    }
  }
  if (uses_lora(out.tuning) && can.lora_roles.empty()) {
    throw UsageError("tuning '" + to_string(out.tuning) + "' applies to the fine-tuning models (" +
                     models_with_lora() + "); '" + info.name + "' trains in full only");
  }
  if (out.tuning == Tuning::kQlora && out.precision == Precision::kFp8) {
    throw UsageError(
        "tuning 'qlora' holds the frozen weights in NF4 and computes in bf16 or fp16; precision "
        "fp8 quantises the same products (use precision bf16)");
  }
  if (out.tuning == Tuning::kFull) {
    for (const auto& [given, key] : {std::pair{request.lora_rank.has_value(), "lora_rank"},
                                     std::pair{request.lora_alpha.has_value(), "lora_alpha"},
                                     std::pair{request.lora_targets.has_value(), "lora_targets"}}) {
      if (given) throw UsageError(std::string(key) + " applies to tuning 'lora' and 'qlora' only");
    }
    out.lora_rank = 0;
    out.lora_alpha = 0;
    out.lora_targets.clear();
  } else {
    const auto targets = layers::parse_lora_targets(out.lora_targets, can.lora_roles, info.name);
    out.lora_targets = targets.size() == can.lora_roles.size() ? "all-linear" : join(targets, ",");
    for (const std::string& target : targets) {
      const auto limit = can.lora_rank_limits.find(target);
      if (limit != can.lora_rank_limits.end() && out.lora_rank > limit->second) {
        throw UsageError("lora_rank " + std::to_string(out.lora_rank) + " is more than " +
                         std::to_string(limit->second) + ", the smaller side of " + info.name +
                         "'s '" + target + "' projection: at most " +
                         std::to_string(limit->second) + " with these targets");
      }
    }
  }
  if (out.blocks > 0) {
    if (can.blocks == 0) {
      throw UsageError("blocks applies to the transformer models (" +
                       models_where([](const ModelCapabilities& m) { return m.blocks > 0; }) +
                       "), not to '" + info.name + "'");
    }
    if (out.blocks > can.blocks) {
      throw UsageError("blocks " + std::to_string(out.blocks) + " is more than " + info.name +
                       "'s " + std::to_string(can.blocks) + ": at most " +
                       std::to_string(can.blocks));
    }
    if (out.task != Task::kTrain) {
      throw UsageError("blocks applies to training (a timeline for gpubench scale), not to infer");
    }
  }
  if (out.activation_checkpointing && !can.activation_checkpointing) {
    throw UsageError(
        "activation_checkpointing applies to the transformer models (" +
        models_where([](const ModelCapabilities& m) { return m.activation_checkpointing; }) +
        "), not to '" + info.name + "'");
  }
}

// The task, which the model must declare it runs; task infer: what the model serves, checked;
// prompt and generation lengths for the models that generate text (their requests are those,
// not a sequence length).
void resolve_inference(const BenchmarkRequest& request, const ModelInfo& info,
                       ResolvedBenchmark& out) {
  const ModelCapabilities& can = info.capabilities;
  if (!can.runs(out.task)) {
    const Task task = out.task;
    throw UsageError("'" + info.name + "' has no " +
                     (task == Task::kInfer ? "inference" : "training") + " path in gpubench; " +
                     to_string(task) + " runs " +
                     models_where([task](const ModelCapabilities& m) { return m.runs(task); }));
  }
  const bool lengths_given = request.prompt_len || request.gen_len;
  if (out.task == Task::kTrain) {
    if (lengths_given) {
      throw UsageError(
          "prompt_len and gen_len apply to inference (gpubench infer, fit --task infer) of the "
          "models that generate text (" +
          generating_models() + ")");
    }
    return;
  }
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(
        "batch_size max searches for the largest batch that trains; infer takes "
        "batch sizes (a list such as 1,8,32)");
  }
  if (uses_lora(out.tuning) || out.activation_checkpointing) {
    throw UsageError(
        "infer runs the model's own weights: tuning 'lora' and 'qlora' and "
        "activation_checkpointing are training settings");
  }
  if (!can.generates) {
    if (lengths_given) {
      throw UsageError("prompt_len and gen_len apply to the models that generate text (" +
                       generating_models() + "), not to '" + info.name + "'");
    }
    return;
  }
  if (request.seq_len) {
    throw UsageError("seq_len does not apply to infer with " + info.name +
                     ": its requests are a prompt (prompt_len) and generated tokens (gen_len)");
  }
  out.seq_len = 0;
  out.prompt_len = request.prompt_len.value_or(kDefaultPromptLength);
  out.gen_len = request.gen_len.value_or(kDefaultGenerationLength);
  if (out.gen_len < 2) {
    throw UsageError("gen_len must be at least 2, got " + std::to_string(out.gen_len) +
                     ": the prompt's pass gives the first token, the decode the rest");
  }
  if (info.max_seq_len > 0 && out.prompt_len + out.gen_len > info.max_seq_len) {
    throw UsageError("prompt_len " + std::to_string(out.prompt_len) + " + gen_len " +
                     std::to_string(out.gen_len) + " is more than " + info.name + "'s " +
                     std::to_string(info.max_seq_len) + " positions");
  }
  // A generation is a request of gen_len steps: a few make a trial.
  if (!request.warmup_steps) out.warmup_steps = 1;
  if (!request.steps) out.steps = 2;
}

// A mixture of experts' top-k: 1 to its experts, its own where not given; dense models have none.
void resolve_experts_per_token(const BenchmarkRequest& request, const ModelInfo& info,
                               ResolvedBenchmark& out) {
  const ModelCapabilities& can = info.capabilities;
  if (request.experts_per_token && can.experts == 0) {
    throw UsageError("experts_per_token applies to the mixtures of experts (" +
                     models_where([](const ModelCapabilities& c) { return c.experts > 0; }) +
                     "); " + info.name + " is a dense model");
  }
  out.experts_per_token = request.experts_per_token.value_or(can.experts_per_token);
  if (out.experts_per_token > can.experts) {
    throw UsageError("experts_per_token " + std::to_string(out.experts_per_token) +
                     " is more than " + info.name + "'s " + std::to_string(can.experts) +
                     " experts; give 1 to " + std::to_string(can.experts));
  }
}

// fp8 (docs/fp8.md): the recipe where the precision is fp8, and none elsewhere; the FP8
// key/value cache for the generation it serves.
void resolve_fp8(const BenchmarkRequest& request, const ModelInfo& info, ResolvedBenchmark& out) {
  if (out.precision != Precision::kFp8) {
    if (request.fp8_recipe) throw UsageError("fp8_recipe applies to precision fp8 only");
    out.fp8_recipe.clear();
  } else if (!info.capabilities.fp8_linear_layers) {
    throw UsageError("precision 'fp8' runs the linear layers' products in FP8, and " + info.name +
                     " declares no FP8-eligible layers (FP8 convolutions are not a PyTorch "
                     "path); use bf16");
  }
  if (out.kv_cache != "fp8") return;
  if (out.task != Task::kInfer || !info.capabilities.generates) {
    throw UsageError("kv_cache fp8 applies to gpubench infer of the models that generate text (" +
                     generating_models() + ")");
  }
  if (!compat::kHasFp8) {
    throw Unavailable(requirement::kLibtorchFp8,
                      "kv_cache fp8 needs LibTorch " + std::string(compat::kFp8MinimumLibtorch) +
                          " or later; this gpubench is built with LibTorch " +
                          compat::libtorch_version());
  }
}

// --tensor-parallel (docs/parallelism.md): a divisor of the world, a model that declares what
// its ranks split and sizes they divide, eager mode, and one node's ranks.
void resolve_tensor_parallel(const ModelInfo& info, const MachineFacts& machine,
                             const ResolvedBenchmark& out) {
  const int ranks = out.tensor_parallel;
  if (ranks == 1) return;
  const std::string given = "tensor_parallel " + std::to_string(ranks);
  if (out.gpus % ranks != 0) {
    throw UsageError(given + " does not divide gpus " + std::to_string(out.gpus) +
                     ": the ranks are tensor-parallel x data-parallel");
  }
  const auto& splits = info.capabilities.tensor_parallel_splits;
  if (splits.empty()) {
    throw UsageError(given + ": " + info.name + " does not shard; tensor parallelism applies to " +
                     tensor_parallel_models() + " (--gpus alone runs data parallel)");
  }
  if (const std::string why = why_not_tensor_split(ranks, splits, info.name); !why.empty()) {
    throw UsageError(why);
  }
  if (out.mode == Mode::kGraph) {
    throw UsageError(given +
                     " runs in eager mode: its all-reduces are not captured in a CUDA "
                     "graph (--mode eager)");
  }
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(given +
                     " with batch_size max: the batch search probes one rank's memory; "
                     "give a batch size");
  }
  if (machine.local_ranks > 0 && ranks > machine.local_ranks) {
    throw UsageError(given + " spans nodes: this node runs " + std::to_string(machine.local_ranks) +
                     " ranks, and tensor parallelism across nodes would run over the network "
                     "fabric; keep it at most " +
                     std::to_string(machine.local_ranks));
  }
  // A group is `ranks` neighbouring ranks: each lies within a node only where they divide the
  // node's ranks (6 ranks on 2 nodes with tensor_parallel 2: ranks 2 and 3 on two nodes).
  if (machine.local_ranks > 0 && machine.local_ranks % ranks != 0) {
    throw UsageError(given + " spans nodes: this node runs " + std::to_string(machine.local_ranks) +
                     " ranks, which " + std::to_string(ranks) +
                     " does not divide, so a group of neighbouring ranks would lie across two "
                     "nodes; give a divisor of " +
                     std::to_string(machine.local_ranks));
  }
}

// --expert-parallel (docs/parallelism.md#expert-parallelism): a mixture of experts, a divisor of
// its experts and of the world, and no other model parallelism beside it.
void resolve_expert_parallel(const ModelInfo& info, const ResolvedBenchmark& out) {
  const int ranks = out.expert_parallel;
  if (ranks == 1) return;
  const std::string given = "expert_parallel " + std::to_string(ranks);
  const int64_t experts = info.capabilities.experts;
  if (experts == 0) {
    throw UsageError(given + ": " + info.name + " has no experts; expert parallelism applies to " +
                     models_where([](const ModelCapabilities& can) { return can.experts > 0; }));
  }
  if (out.gpus % ranks != 0) {
    throw UsageError(given + " does not divide gpus " + std::to_string(out.gpus) +
                     ": the ranks are expert-parallel x expert replicas");
  }
  if (const std::string why = why_not_expert_split(ranks, experts, info.name); !why.empty()) {
    throw UsageError(why);
  }
  if (out.tensor_parallel > 1) {
    throw UsageError(given + " with tensor_parallel " + std::to_string(out.tensor_parallel) +
                     ": expert and tensor parallelism together are not supported; use one");
  }
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(given +
                     " with batch_size max: the batch search probes one rank's memory; "
                     "give a batch size");
  }
  // Sharding reduces every gradient over all the data-parallel ranks, where expert parallelism
  // reduces an expert's over the ranks that hold it alone: the experts different ranks hold
  // would be averaged together, and the run would train another model.
  if (out.sharded()) {
    throw UsageError(given + " with shard " + out.shard +
                     ": sharding reduces every gradient over all ranks, which would average "
                     "experts that different ranks hold; use shard none with expert_parallel");
  }
}

// MXFP4's blocks of 32 run along an expert's inputs: under tensor parallelism each rank's slice
// of the expert width must be whole blocks.
void check_mxfp4_slices(const ModelInfo& info, const ResolvedBenchmark& out) {
  const int64_t width = info.capabilities.expert_width;
  const int64_t slice = width / std::max(1, out.tensor_parallel);
  if (slice % mxfp4::kBlock == 0) return;
  throw UsageError("weights mxfp4 with tensor_parallel " + std::to_string(out.tensor_parallel) +
                   ": " + info.name + "'s expert width " + std::to_string(width) + " splits into " +
                   std::to_string(slice) + " per rank, not whole MXFP4 blocks of " +
                   std::to_string(mxfp4::kBlock) +
                   "; use a tensor_parallel that leaves multiples of " +
                   std::to_string(mxfp4::kBlock) + ", expert_parallel, or weights bf16");
}

}  // namespace

void check_int4_shapes(const ModelInfo& info, const ResolvedBenchmark& out) {
  for (const auto& shape : info.capabilities.linear_weight_shapes) {
    // Each rank holds its slice; the sizes divide (resolve_tensor_parallel).
    const auto [rows, columns] = shape.slice(out.tensor_parallel);
    const std::string why =
        integer_weights::why_not_int4(rows, columns, out.weight_group, out.device);
    if (!why.empty()) {
      throw UsageError("weights int4 with weight_group " + std::to_string(out.weight_group) + ": " +
                       info.name + "'s [" + std::to_string(rows) + ", " + std::to_string(columns) +
                       "] weight" +
                       (out.tensor_parallel > 1 ? " (a tensor-parallel rank's slice)" : "") +
                       " cannot be held so: " + why);
    }
  }
}

namespace {

// infer's weights (docs/inference.md#integer-weights): a float format is the precision's (given
// alone it sets the precision; stored as none); int8 and int4 compute in bf16 and hold to the
// kernels' shape rules, checked here on the model's declared shapes; the group only for int4.
void resolve_weights(const BenchmarkRequest& request, const ModelInfo& info,
                     ResolvedBenchmark& out) {
  std::string weights = out.weights == "auto" ? std::string() : out.weights;
  const bool precision_is_default_format =
      !request.precision || *request.precision == Precision::kBf16;
  if (weights.empty() && out.task == Task::kInfer && precision_is_default_format) {
    weights = info.capabilities.default_weights;
  }
  if (weights == "mxfp4" && info.capabilities.experts == 0) {
    throw UsageError("weights 'mxfp4' holds the experts of a mixture of experts (" +
                     models_where([](const ModelCapabilities& can) { return can.experts > 0; }) +
                     "); " + info.name + " is a dense model");
  }
  const bool quantized = integer_weights::is_integer_format(weights) || weights == "mxfp4";
  if (request.weight_group && weights != "int4") {
    throw UsageError("weight_group applies to weights int4 only");
  }
  out.weight_group = weights == "int4" ? out.weight_group : 0;
  out.weights = "auto";
  if (weights.empty()) return;
  if (out.task != Task::kInfer) {
    throw UsageError("weights '" + weights +
                     "' applies to gpubench infer; training holds its weights in the precision's "
                     "dtype (--precision)");
  }
  const ModelCapabilities& can = info.capabilities;
  const bool declared = integer_weights::is_integer_format(weights)
                            ? can.holds_weights_in(weights)
                            : weights == "mxfp4" || can.holds_integer_weights() || can.experts > 0;
  if (!declared && !quantized) {
    // bf16, fp16, fp8: a precision's name, which such a model takes as --precision.
    throw UsageError("weights '" + weights +
                     "' names a precision, and chooses among weight formats for the models that "
                     "hold others (" +
                     integer_weight_models() + "); " + info.name +
                     " holds the precision's: use --precision " + weights);
  }
  if (!declared) {
    throw UsageError("weights '" + weights + "' applies to the models that hold integer weights (" +
                     integer_weight_models() + "); " + info.name +
                     " holds the precision's (--precision)");
  }
  const std::string precision = quantized ? "bf16" : weights;
  if (request.precision && to_string(*request.precision) != precision) {
    throw UsageError("weights '" + weights + "' " +
                     (quantized ? "computes in bf16" : "is precision " + weights + "'s") +
                     ": precision '" + to_string(*request.precision) +
                     "' does not go with it (use --precision " + precision + " or leave it out)");
  }
  out.precision = parse_precision(precision);
  if (!quantized) return;
  if (weights == "mxfp4") {
    check_mxfp4_slices(info, out);
    out.weights = weights;
    return;
  }
  if (weights == "int4" && !integer_weights::is_int4_group(out.weight_group)) {
    throw UsageError("weight_group must be 32, 64 or 128, got " + std::to_string(out.weight_group));
  }
  // The LibTorch before the model's shapes: no option of the command fixes it (fit stands in for
  // it and checks the shapes itself, runner/prediction_subject.cpp).
  if (!compat::kHasIntWeights) {
    throw Unavailable(requirement::kLibtorchIntWeights,
                      "weights " + weights + " needs LibTorch " +
                          std::string(compat::kIntWeightsMinimumLibtorch) +
                          " or later (its int8/int4 matmul kernels); this gpubench is built with "
                          "LibTorch " +
                          compat::libtorch_version());
  }
  if (weights == "int4") check_int4_shapes(info, out);
  out.weights = weights;
}

// infer holds the weights in the precision's format (fp32 for tf32; fp8 quantised once): one the
// model declares.
void check_weight_format(const ModelInfo& info, const ResolvedBenchmark& out) {
  if (out.task != Task::kInfer) return;
  const bool integer = integer_weights::is_integer_format(out.weights) || out.weights == "mxfp4";
  const std::string format = integer                             ? out.weights
                             : out.precision == Precision::kTf32 ? "fp32"
                                                                 : to_string(out.precision);
  if (!info.capabilities.holds_weights_in(format)) {
    throw UsageError("infer with precision '" + to_string(out.precision) + "' holds " + info.name +
                     "'s weights in " + format +
                     ", which it does not declare; it "
                     "holds " +
                     join(info.capabilities.weight_formats));
  }
}

// The trace's folder must exist and take a new file: found now, not after the measured trials.
void check_profile_path(const std::string& path) {
  if (path.empty()) return;
  check_path_limits(path, "profile", kNewFileSuffixRoom);
  if (is_special_file(path)) return;  // written into, as an output is
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw UsageError("profile '" + echoed(path) + "' is a directory; it names the trace file");
  }
  const std::string folder = folder_of(path);
  if (!std::filesystem::is_directory(folder, error)) {
    throw UsageError("profile '" + echoed(path) + "': its folder '" + echoed(folder) +
                     "' does not exist");
  }
  if (const std::string why = why_not_writable(folder); !why.empty()) {
    throw UsageError("profile '" + echoed(path) + "': cannot write in '" + echoed(folder) +
                     "': " + why);
  }
}

}  // namespace

int fewest_warmup_steps(const ResolvedBenchmark& b) {
  const ModelInfo& info = ModelRegistry::instance().get(b.model);
  int fewest = 1;
  if (info.minimum_warmup_steps) fewest = info.minimum_warmup_steps(b.tgt_len, b.mem_len);
  if (b.mode == Mode::kGraph) fewest = std::max(fewest, graph_capture_warmup_steps(b.task));
  return std::max(1, fewest);
}

// --shard (docs/parallelism.md): training a model by its repeated blocks, every parameter
// trained, in eager mode, over the data-parallel ranks alone.
void resolve_shard(const ModelInfo& info, const ResolvedBenchmark& out) {
  if (!out.sharded()) return;
  const std::string given = "shard " + out.shard;
  if (out.task != Task::kTrain) throw UsageError(given + " is a training setting, not infer's");
  if (!info.capabilities.observed_blocks) {
    throw UsageError(
        given + ": " + info.name +
        " declares no repeated blocks to shard by (a unit per block); sharding "
        "applies to " +
        models_where([](const ModelCapabilities& can) { return can.observed_blocks; }));
  }
  if (out.tuning != Tuning::kFull) {
    throw UsageError(given + " with tuning " + to_string(out.tuning) +
                     ": sharding is for full fine-tunes (--tuning full); the adapters of LoRA "
                     "train under DDP's replicas");
  }
  if (out.tensor_parallel > 1) {
    throw UsageError(given + " with tensor_parallel " + std::to_string(out.tensor_parallel) +
                     ": sharding and tensor parallelism together are not supported; use one");
  }
  if (out.precision == Precision::kFp8) {
    throw UsageError(given +
                     " with precision fp8: the FP8 layers' scaling state is not sharded; use "
                     "bf16, fp16, tf32 or fp32");
  }
  if (out.mode == Mode::kGraph) {
    throw UsageError(given +
                     " runs in eager mode: its gathers and frees are not captured in a CUDA "
                     "graph (--mode eager)");
  }
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(given +
                     " with batch_size max: the batch search probes an unsharded step; give a "
                     "batch size (gpubench fit --shard predicts one)");
  }
}

DeviceKind resolve_device(DeviceKind requested, int ranks, const MachineFacts& machine) {
  const DeviceKind device = requested != DeviceKind::kAuto
                                ? requested
                                : (machine.cuda_available ? DeviceKind::kCuda : DeviceKind::kCpu);
  if (device == DeviceKind::kCuda && !machine.cuda_available) {
    throw Unavailable(requirement::kCuda,
                      "device 'cuda' requested but no CUDA device is available; use --device cpu");
  }
  // CPU ranks that gpubench starts here; ranks a launcher started are the launcher's business.
  if (device == DeviceKind::kCpu && machine.local_ranks == 0 && ranks > most_per_machine(machine)) {
    throw UsageError("gpus " + std::to_string(ranks) + " CPU ranks: " + logical_cpus(machine) +
                     "; at most " + std::to_string(most_per_machine(machine)) + " CPU ranks (" +
                     std::to_string(kMaxPerLogicalCpu) + " per logical CPU)");
  }
  const int ranks_here = machine.local_ranks > 0 ? machine.local_ranks : ranks;
  const bool one_device_per_task = machine.local_ranks > 0 && machine.cuda_device_count == 1;
  if (device == DeviceKind::kCuda && ranks_here > machine.cuda_device_count &&
      !one_device_per_task) {
    throw UsageError("--gpus " + std::to_string(ranks_here) + " on this machine but only " +
                     std::to_string(machine.cuda_device_count) + " CUDA device(s) present");
  }
  return device;
}

ResolvedBenchmark resolve(const BenchmarkRequest& request, const MachineFacts& machine) {
  ResolvedBenchmark out = with_fixed_defaults(request);
  const ModelInfo& info = ModelRegistry::instance().get(out.model);
  out.model = info.name;
  resolve_tensor_parallel(info, machine, out);
  resolve_expert_parallel(info, out);
  out.device = resolve_device(out.device, out.gpus, machine);
  resolve_weights(request, info, out);
  PrecisionPolicy::unsupported_reason(out.precision, out.device, machine).raise_if_refused();
  if (out.weights == "int4" && out.device == DeviceKind::kCuda &&
      machine.cuda_compute_capability < kInt4ComputeCapability) {
    throw Unavailable(requirement::kInt4Kernel,
                      "weights int4 needs compute capability 8.0 or later on CUDA (LibTorch's "
                      "int4 kernel); " +
                          machine.cuda_device_name + " has " +
                          compute_capability_text(machine.cuda_compute_capability));
  }
  out.batch_size = request.batch_size.value_or(info.default_batch_size);
  if (out.task == Task::kTrain && out.batch_size != kSearchBatchSize &&
      out.batch_size < info.min_training_batch) {
    throw UsageError("batch_size " + std::to_string(out.batch_size) + " is too small for " +
                     info.name + ", which trains at " + std::to_string(info.min_training_batch) +
                     " or more per device: " + info.min_training_batch_why);
  }
  out.channels_last = request.channels_last.value_or(
      info.prefers_channels_last &&
      PrecisionPolicy::favours_channels_last(out.precision, out.device));
  const bool segments = info.capabilities.input == SyntheticInput::kTokenSegments;
  if (!segments && (request.tgt_len || request.mem_len)) {
    throw UsageError("tgt_len and mem_len apply to language models only, not to '" + info.name +
                     "'");
  }
  if (segments) {
    out.tgt_len = request.tgt_len.value_or(info.default_tgt_len);
    out.mem_len = request.mem_len.value_or(info.default_mem_len);
  }
  resolve_objects(request, info, out);
  if (info.capabilities.needs_vision_ops) vision_ops::require(info.name);
  if (request.optimizer) {
    OptimizerRegistry::instance().get(*request.optimizer);  // an unknown name is a usage error
    if (out.task == Task::kInfer) throw UsageError("optimizer is a training setting, not infer's");
    if (*request.optimizer == info.optimizer) out.optimizer.clear();  // the model's own
  }
  resolve_fine_tuning(request, info, out);
  resolve_inference(request, info, out);
  resolve_fp8(request, info, out);
  resolve_experts_per_token(request, info, out);
  check_weight_format(info, out);
  if (info.minimum_warmup_steps) {
    const int needed = info.minimum_warmup_steps(out.tgt_len, out.mem_len);
    if (out.warmup_steps < needed) {
      throw UsageError("warmup_steps " + std::to_string(out.warmup_steps) + " are too few for " +
                       info.name + ": it needs at least " + std::to_string(needed));
    }
  }
  // CPU ranks on one machine share its cores.
  const int ranks_here = machine.local_ranks > 0 ? machine.local_ranks : out.gpus;
  const int cores = std::max(1, machine.cpu_cores);
  out.threads = request.threads.value_or(
      out.device == DeviceKind::kCpu ? std::max(1, cores / ranks_here) : cores);
  check_machine_bounds(out, machine);
  check_profile_path(out.profile);
  // The search hands the limit to fit as a card's size: the user's value meets fit's rule here,
  // named as the user gave it, not in the child.
  if (out.batch_size == kSearchBatchSize && out.memory_limit > 0 &&
      out.memory_limit < kSmallestCardBytes) {
    throw UsageError("memory_limit " + std::to_string(out.memory_limit) +
                     " bytes is under 1 MiB, the least a batch search (batch_size max) takes");
  }
  resolve_shard(info, out);
  graph_mode_unsupported_reason(out).raise_if_refused();
  return out;
}

ResolvedBenchmark as_requested(const BenchmarkRequest& request) {
  ResolvedBenchmark out = with_fixed_defaults(request);
  const ModelInfo& info = ModelRegistry::instance().get(out.model);
  out.model = info.name;
  if (out.device == DeviceKind::kAuto) out.device = DeviceKind::kCuda;
  if (!request.batch_size || *request.batch_size == kSearchBatchSize) {
    out.batch_size = info.default_batch_size;
  }
  out.threads = std::max<int64_t>(1, out.threads);
  // A skipped int4 run reads as the bf16 run it would have been.
  if (!request.precision && integer_weights::is_integer_format(out.weights)) {
    out.precision = Precision::kBf16;
  }
  return out;
}

}  // namespace gpubench
