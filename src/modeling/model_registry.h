// The plug-in table of models: each file in models/ registers its models here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "gpubench/model.h"  // TrainableModel, SyntheticBatch, SyntheticInput, ModelDeclaration
#include "modeling/layer_placement.h"
#include "modeling/text_generation.h"
#include "settings/setting_sections.h"

namespace gpubench {

struct LoraSettings {
  int64_t rank = 16;
  double alpha = 32;
  // Projection roles ("q", "k", "v", "o", "gate", "up", "down") that get adapters.
  std::vector<std::string> targets;
};

// What a model is built with: the benchmark's sequence, detection and fine-tuning sections as
// resolved (a length of 0: the model's own, for FLOP counts), and what the features applied to it
// decide (features/model_options.h: LoRA's adapters with their targets read, a mixture's experts
// in MXFP4, the layers' placement over ranks), and when the weights are drawn.
struct ModelOptions : SequenceSettings, DetectionSettings, FineTuningSettings {
  LoraSettings lora;
  // fit's probes: the rows of the token embedding and the output head, narrowed from the model's
  // own vocabulary (ModelCapabilities::vocab); 0: the model's.
  int64_t vocab = 0;
  // fit's probes: the hidden size, the MLP width and the attention and key/value heads divided
  // by this, the head width kept (ModelCapabilities::max_width_divisor); 1: the model's.
  int64_t width_divisor = 1;
  // With width_divisor: the key/value heads kept whole, where tensor parallelism splits too few of
  // them to divide (ModelCapabilities::max_width_divisor_keeping_key_value_heads).
  bool width_keeps_key_value_heads = false;
  // Leave the weights undrawn until initialize_weights(), which the launcher calls once the model
  // is on its device: an 8B model's weights are drawn there in milliseconds, not on the host in
  // minutes. Models that draw their weights in their modules' constructors ignore it.
  bool defer_initialization = false;
  // The groups the model's layers are split over (--tensor-parallel, --expert-parallel); none:
  // one rank holds the whole model. The model builds its layers through it
  // (modeling/layer_placement.h).
  layers::LayerPlacement placement;
  // infer --weights mxfp4: a mixture of experts holds its experts in MXFP4 from construction (no
  // float copy ever exists: gpt-oss-120b's experts are 230 GB in bf16 and 61 GB in MXFP4).
  bool experts_in_mxfp4 = false;
  // A mixture of experts' top-k (--experts-per-token); 0: the model's own.
  int64_t experts_per_token = 0;
  // fit's probes: a mixture of experts' experts in each MoE layer, fewer than the model's
  // (ModelCapabilities::experts); 0: the model's.
  int64_t experts = 0;
  // fit's training probes: a mixture of experts routes each token to the next k experts in turn
  // (moe::TopKRouterImpl), not to its k largest logits.
  bool balanced_routes = false;
};

// Figures counted from an instantiated model (or, for models too large to build anywhere the
// tests run, from their configuration by a rule tested against built ones), not estimated.
// What a tensor-parallel rank splits of a transformer's attention, as its
// ModelCapabilities::split_counts names it: fit's narrowed probes may keep it whole.
inline constexpr const char* kKeyValueHeadsSplit = "key/value heads";

// The most fit's probes narrow a model's width by (ModelOptions::width_divisor).
inline constexpr int64_t kMaxWidthDivisor = 16;

struct ModelStats {
  int64_t params = 0;
  int64_t trainable_params = 0;    // params less the frozen ones (LoRA)
  int64_t nf4_params = 0;          // frozen weights QLoRA holds in NF4 (0.5625 bytes each)
  int64_t largest_nf4_weight = 0;  // of those, the largest matrix's elements
  // A mixture of experts: its experts' weight matrices, which infer --weights mxfp4 holds in
  // 4.25 bits (modeling/mxfp4_weights.h).
  int64_t expert_weight_params = 0;
  // A mixture of experts: the parameters one token computes with (all but the embedding table
  // and the experts not chosen); 0 for a dense model, which computes with all of them.
  int64_t active_params = 0;
  // per sample: 2 x multiply-adds of convolutions, linear layers and attention products
  int64_t forward_flops = 0;
  // per sample: the part of forward_flops that multiplies by a weight (the linear layers' and the
  // convolutions', not attention's products); declared by the fine-tuning models, whose weights
  // LoRA freezes
  int64_t weight_flops = 0;
  // per sample: the part of forward_flops that multiplies by a frozen weight; training does not
  // compute those weights' gradients
  int64_t frozen_weight_flops = 0;
  // Forward, input gradients (as much as the forward) and weight gradients (as much as the
  // forward of every product with a trainable weight): 3 x forward_flops less the frozen part.
  int64_t train_flops() const { return 3 * forward_flops - frozen_weight_flops; }
  // The parameters one token computes with: a mixture of experts' active ones, a dense model's
  // all; as listed ("all" for a dense model).
  int64_t computed_params() const { return active_params > 0 ? active_params : params; }
  std::string computed_params_text() const {
    return active_params > 0 ? std::to_string(active_params) : "all";
  }
};

std::string to_string(SyntheticInput input);

// What a model can do, declared in its registration. Resolve, the precision policy and graph
// mode's rules read these; nothing checks a model's name or family.
struct ModelCapabilities {
  SyntheticInput input = SyntheticInput::kImages;
  bool trains = true;
  // gpubench infer: forward passes as served (TrainableModel::inference_output).
  bool infers = false;
  // Text generation with a key/value cache (TrainableModel::text_generator); infer of such a
  // model generates.
  bool generates = false;
  // A training step, and an inference pass or decode step, captured in a CUDA graph. A model
  // that makes new tensors every step (Transformer-XL's memory) cannot be replayed.
  bool graph_training = false;
  bool graph_inference = false;
  // Why graph mode cannot capture it, where a reason is known (Mask R-CNN: its proposals are
  // chosen by the data); empty: the model declares no graph-mode support.
  std::string graph_refusal;
  // It calls torchvision's operators (torch_support/vision_ops.h): resolve refuses it where they
  // cannot be loaded.
  bool needs_vision_ops = false;
  // Its transformer blocks can recompute their activations in backward.
  bool activation_checkpointing = false;
  // Its products (its weights' products, most of its FLOPs) run through gpubench's linear layers
  // (layers::Linear, modeling/linear_compute.h), where features such as precision fp8 rewrite
  // them; not its convolutions, and not a mixture's experts.
  bool products_in_linear_layers = false;
  // What a step allocates depends on its shapes alone, not on its weights' values (no routing or
  // selection by score): fit's probes may build it undrawn, its weights zeroed over one shared
  // buffer (memory/shared_storage.h), as they do every counted model (ModelInfo::count).
  bool memory_independent_of_weights = false;
  // Projection roles LoRA may adapt, in order; empty: the model trains in full only.
  std::vector<std::string> lora_roles;
  // Per role, the smaller side of its projection (min of in and out features): the largest rank
  // whose adapter is still low-rank.
  std::map<std::string, int64_t> lora_rank_limits;
  // The repeated blocks ModelOptions::blocks (--blocks) can reduce; 0: none to reduce.
  int64_t blocks = 0;
  // Its blocks run through run_observed_block (modeling/block_observer.h), where --shard gathers
  // each one's parameters.
  bool observed_blocks = false;
  // The blocks repeat in groups of this many, alike within a group's place (gpt-oss: a sliding-
  // window layer, then a full one): fit's probes by blocks build one group and two.
  int64_t block_period = 1;
  // Its token vocabulary, which ModelOptions::vocab can narrow for fit's probes; 0: none.
  int64_t vocab = 0;
  // The largest ModelOptions::width_divisor its configuration divides by (a power of two; 1:
  // fit's probes keep its width): every width its blocks split, heads and key/value heads
  // included, divides by it (a Llama's to multiples of 128, the largest group a weight format
  // quantises by).
  int64_t max_width_divisor = 1;
  // The same with the key/value heads kept whole (ModelOptions::width_keeps_key_value_heads):
  // every other width divides by it, and the attention heads then still group over the key/value
  // heads.
  int64_t max_width_divisor_keeping_key_value_heads = 1;
  // A transformer's hidden size (the width of what its blocks pass on); 0: not a transformer.
  int64_t hidden_size = 0;
  // A transformer's attention head width, which fit's probes keep; 0: not declared.
  int64_t attention_head_dim = 0;
  // How infer can hold its weights: "fp32", "bf16", "fp16" (the precision's dtype), "fp8"
  // (quantised once, the linear layers' products in FP8), "mxfp4" (a mixture's experts); empty
  // for a model that does not infer. The integer-code formats (int8, int4) are not declared: a
  // model that declares linear_weight_shapes holds each (holds_weights_in).
  std::vector<std::string> weight_formats = {"fp32", "bf16", "fp16"};
  // What infer holds the weights in when --weights is auto; empty: the precision's dtype.
  std::string default_weights;
  // A mixture of experts: its experts in each MoE layer and how many each token visits; 0: a
  // dense model.
  int64_t experts = 0;
  int64_t experts_per_token = 0;
  // Each expert's intermediate dimension, which tensor parallelism splits.
  int64_t expert_width = 0;
  // The shapes of its quantisable linear layers' weights, each once with its projection's role
  // (which decides a tensor-parallel rank's slice): declared, the model holds every integer-code
  // format (modeling/weight_formats.h), and resolve holds each rank's slice to the format's rules
  // (int4's kernel shapes).
  struct LinearWeightShape {
    int64_t out = 0, in = 0;
    // a projection's, which decides a tensor-parallel rank's slice
    // (parallelism::weight_slice), or "" for one held whole
    std::string role;
  };
  std::vector<LinearWeightShape> linear_weight_shapes;
  // Tensor parallelism (--tensor-parallel): what its ranks split, each named with its size
  // ("key/value heads" 8, "attention heads" 64, ...); the first bounds the ranks, each must be
  // divided by them. Empty: the model does not shard.
  TensorParallelSplits split_counts;

  bool runs(Task task) const { return task == Task::kTrain ? trains : infers; }
  bool captures(Task task) const { return task == Task::kTrain ? graph_training : graph_inference; }
  // Declared in weight_formats, or an integer-code format where the model declares its linear
  // weights' shapes (and infers).
  bool holds_weights_in(const std::string& format) const;
  bool holds_integer_weights() const { return infers && !linear_weight_shapes.empty(); }
  // weight_formats and the integer-code formats it holds, for the reference.
  std::vector<std::string> held_weight_formats() const;
};

struct ModelInfo {
  std::string name;                  // command-line name, e.g. "resnet50"
  std::vector<std::string> aliases;  // other accepted names
  std::string family;                // a label for reports' per-family tables: "convnet", ...
  std::string task;                  // "image-classification", ...
  std::string sample_unit;           // "images", ...
  std::vector<int64_t> input_shape;  // of one sample
  int64_t default_batch_size = 32;   // per device
  // The smallest per-device batch it trains at, and why where it is more than 1.
  int64_t min_training_batch = 1;
  std::string min_training_batch_why;
  std::string reference;  // the architecture this model reproduces
  ModelCapabilities capabilities;
  int64_t default_tgt_len = 0;  // token segments: tokens per segment, and memory
  int64_t default_mem_len = 0;
  // NHWC activations help it where the precision policy says the device computes in tensor
  // cores (convolutions under mixed precision on CUDA).
  bool prefers_channels_last = false;
  // Fewest warm-up steps before its timed steps are in steady state; unset: any number.
  std::function<int(int64_t tgt_len, int64_t mem_len)> minimum_warmup_steps;
  // Token sequences: tokens per sequence (seq_len), and its bound (positions); 0: none.
  int64_t default_seq_len = 0;
  int64_t max_seq_len = 0;
  // Detection images: the synthetic objects in each (objects_per_image).
  int64_t default_objects_per_image = 0;
  // The optimiser its reference recipe trains with (optim/optimizer_registry.h).
  std::string optimizer = "sgd";
  // A test model: left out of every listing, and found by name only with the test hooks on
  // (testing/test_hooks.h).
  bool hidden = false;
  std::function<std::unique_ptr<TrainableModel>(const ModelOptions&)> create;
  // Counts from the configuration, without building the model (large language models); unset:
  // counted on an instance.
  std::function<ModelStats(const ModelOptions&)> count;
  // Its counts at its default options, as an instance of it counts them (measure_instance): what
  // `gpubench models` lists without building it (Mask R-CNN's forward alone takes seconds). A
  // test recounts every declared one on an instance. Unset: counted by `count`, or on an
  // instance.
  std::optional<ModelStats> default_counts;
  // An estimate of the activations one training step keeps for backward, in bytes, at `batch`
  // per device with activations of `element_bytes`; unset: not estimated.
  std::function<int64_t(const ModelOptions&, int64_t batch, int64_t element_bytes)>
      activation_bytes;
  // The transient of one attention layer that grows with the square of the prompt, in bytes, at
  // `batch` x `tokens` on the prompt's pass (inference), computing in elements of `element_bytes`:
  // what fit --task infer's probes, a few tokens long, cannot see, and add (inference_fit.h). The
  // model holds a ScoreMoment around it. Unset: the attention holds no square (a fused kernel).
  std::function<int64_t(const ModelOptions&, int64_t batch, int64_t tokens, int64_t element_bytes)>
      prefill_score_bytes;

  // What its throughput counts per second: tokens for a model that generates, its samples
  // otherwise ("images/sec", "sequences/sec", "tokens/sec").
  std::string throughput_unit(Task task) const;

  // create(options), with every feature's transform applied (modeling/model_transforms.h).
  std::unique_ptr<TrainableModel> instantiate(const ModelOptions& options = {}) const;
};

// The registry entry of a model of one's own (include/gpubench/model.h): what it declares, and
// the defaults of a model that declares nothing more.
ModelInfo model_info_of(const ModelDeclaration& declaration);

// `info` with its counts at its default options declared (ModelInfo::default_counts): its
// parameters, those that train, and forward FLOPs per sample with their part that multiplies by
// frozen weights.
ModelInfo with_default_counts(ModelInfo info, int64_t params, int64_t trainable_params,
                              int64_t forward_flops, int64_t frozen_weight_flops = 0);

// The model's counts: from its configuration where it has a rule, else from an instance drawn
// from a fixed seed (the caller's random stream untouched).
ModelStats measure_model(const ModelInfo& info, const ModelOptions& options = {});
// Its counts at its default options, as listed: by its rule, as declared, or on an instance.
ModelStats listed_counts(const ModelInfo& info);
// The same for a model already built, on the CPU; leaves it in evaluation mode.
ModelStats measure_instance(TrainableModel& model);

class ModelRegistry {
 public:
  static ModelRegistry& instance();
  void add(ModelInfo info);
  const ModelInfo* find(const std::string& name_or_alias) const;
  const ModelInfo& get(const std::string& name_or_alias) const;  // throws UsageError
  std::vector<const ModelInfo*> all() const;  // sorted by name; without the hidden ones
  std::vector<std::string> names() const;
  // The listed models that `holds`, by name ("bert-large, llama-2-7b, ...").
  std::string names_where(const std::function<bool(const ModelCapabilities&)>& holds) const;

 private:
  std::vector<std::unique_ptr<ModelInfo>> models_;
};

// `static const ModelRegistration kRegistration{ModelInfo{...}};` in a model's file.
struct ModelRegistration {
  explicit ModelRegistration(ModelInfo info) { ModelRegistry::instance().add(std::move(info)); }
};

}  // namespace gpubench
