// Bring your own model (docs/api.md): a model is a TrainableModel (its module, a synthetic batch on
// the device, its loss) with a ModelDeclaration (its name, what it reads, its unit, its default
// batch, how to build it), registered by name. Registered, it runs with gpubench's features that
// apply from outside a model: the precisions, data parallelism, graph mode where it declares it,
// the memory breakdown and `fit`, telemetry, result files and reports.
//
//   GPUBENCH_REGISTER_MODEL(gpubench::image_classifier<MyNet>(
//       "my-net", {}, 224, 64, "my reference", [](int64_t classes) { return MyNet(classes); }));
//
// This header and those it includes are the whole public interface of a model: they include
// only LibTorch and the standard library.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpubench/layers.h"  // Conv2d and Linear that count their FLOPs

namespace gpubench {

class TextGenerator;  // text generation with a key/value cache: gpubench's own language models

// The kind of synthetic batch a model trains on.
enum class SyntheticInput {
  kImages,           // images and class labels
  kTokenSegments,    // token segments read with a recurrent memory (tgt_len, mem_len)
  kTokenSequences,   // token sequences of seq_len (masked or causal language modelling)
  kDetectionImages,  // images with objects_per_image boxes and labels each (object detection)
};

// One synthetic batch that lives on the device for the whole run.
struct SyntheticBatch {
  torch::Tensor inputs;
  torch::Tensor targets;
  std::vector<torch::Tensor> extras;  // further inputs of one model (BERT's token types, ...)
};

// A model ready to train: its module, its synthetic data and its loss.
class TrainableModel {
 public:
  virtual ~TrainableModel() = default;
  virtual torch::nn::Module& module() = 0;
  virtual SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                         bool channels_last) = 0;
  // Forward pass and loss, returned in float32 whatever autocast computed inside.
  virtual torch::Tensor training_loss(const SyntheticBatch& batch) = 0;
  // One inference-mode forward pass on the CPU, for counting FLOPs; returns how many samples
  // (images, tokens) it covered.
  virtual int64_t count_forward() = 0;
  // Samples in one batch item: 1 for an image or a BERT sequence, tgt_len or seq_len tokens for
  // a language model whose throughput is in tokens.
  virtual int64_t samples_per_item() const { return 1; }
  // Tokens in one batch item; 0 for a model that does not read tokens.
  virtual int64_t tokens_per_item() const { return 0; }
  // Draws the weights of a model that left them undrawn when it was built (gpubench's own large
  // language models: drawn on the device in milliseconds, not on the host in minutes).
  virtual void initialize_weights() {}
  // Draws, each into storage of its own, the weights whose values decide what a pass allocates
  // (a mixture of experts' routing: which experts take how many tokens), as initialize_weights()
  // draws them: fit's probes, whose other weights are zeros, then route as a run does. With a
  // zero embedding every token's hidden state is the same and every token goes to the same
  // experts (test-tiny-gpt-oss at batch 4, prompt 56: a prompt's pass 60 % above the run's).
  virtual void initialize_routing() {}
  // A model that reads its segments with a recurrent memory (SyntheticInput::kTokenSegments)
  // lets it go, as a new synthetic batch does: fit's probes read each shape's from nothing.
  virtual void clear_recurrent_memory() {}
  // Models whose batches are token sequences: the next synthetic batches have `tokens` per
  // item (what `fit` probes at). false where the model has no sequence length to change.
  virtual bool set_sequence_length(int64_t tokens) {
    (void)tokens;
    return false;
  }

  // gpubench infer (docs/inference.md). The forward pass as served, its main output (logits);
  // called in evaluation mode under inference mode. Undefined (the default): the model has no
  // inference path.
  virtual torch::Tensor inference_output(const SyntheticBatch& batch) {
    (void)batch;
    return {};
  }
  // Models that generate text: their generation with a key/value cache; null for the others.
  virtual TextGenerator* text_generator() { return nullptr; }
  // Weights (and buffers) in `dtype` for half-precision inference, as inference engines hold
  // them; what must stay float32 (Llama's rotary frequencies) is kept outside the buffers.
  virtual void cast_for_inference(torch::ScalarType dtype) { module().to(dtype); }
};

// What a model is built with, of the benchmark's settings.
struct ModelBuild {
  int64_t seq_len = 0;  // token sequences: tokens per sequence (--seq-len)
};

// A model of your own as gpubench's registry takes it. What it does not declare, it does not
// do: LoRA, integer weights and tensor parallelism need what gpubench's own models declare.
struct ModelDeclaration {
  std::string name;                  // its command-line name: "my-net"
  std::vector<std::string> aliases;  // other names it is found by
  std::string family = "custom";     // reports' per-family tables: "convnet", ...
  std::string task;                  // "image-classification", "language-modeling", ...
  std::string sample_unit;           // what its throughput counts: "images", "tokens", ...
  SyntheticInput input = SyntheticInput::kImages;  // images or token sequences
  std::vector<int64_t> input_shape;  // of one sample ({3, 224, 224}); empty for tokens
  int64_t default_batch_size = 32;   // per device
  int64_t default_seq_len = 0;       // token sequences: tokens per sequence, and its bound
  int64_t max_seq_len = 0;
  std::string reference;          // the architecture it reproduces
  std::string optimizer = "sgd";  // its reference recipe's: "sgd" or "adamw"
  bool infers = false;            // `gpubench infer`: TrainableModel::inference_output
  // CUDA graphs can capture its training step, and its inference pass: it makes no new tensors
  // from step to step.
  bool graph_training = false;
  bool graph_inference = false;
  // Its weights' products run through layers::Linear, which precision fp8 runs in FP8.
  bool products_in_linear_layers = false;
  // NHWC activations help it where convolutions compute in tensor cores.
  bool prefers_channels_last = false;
  std::function<std::unique_ptr<TrainableModel>(const ModelBuild&)> create;
};

// Adds the model to the registry, where every gpubench command finds it by name; returns whether
// it did. Called at start-up, it never throws: a declaration without a name or `create`, with a
// name already taken, or reading neither images nor token sequences, is left out with one line
// on standard error saying why.
bool register_model(const ModelDeclaration& declaration);

#define GPUBENCH_CONCATENATE_(a, b) a##b
#define GPUBENCH_CONCATENATE(a, b) GPUBENCH_CONCATENATE_(a, b)

// Registers the ModelDeclaration the arguments make, at start-up, as each model of gpubench's zoo
// registers itself. At namespace scope in a source file linked into the executable.
#define GPUBENCH_REGISTER_MODEL(...)                                                      \
  [[maybe_unused]] static const bool GPUBENCH_CONCATENATE(gpubench_model_, __COUNTER__) = \
      ::gpubench::register_model(__VA_ARGS__)

}  // namespace gpubench
