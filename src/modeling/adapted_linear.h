// The linear projections of the fine-tuning models, with optional LoRA adapters (Hu et al. 2021,
// as PEFT and torchtune build them): y = x W^T + b + (alpha / r) x A^T B^T, A [r, in] drawn
// like a linear layer's weight (Kaiming-uniform), B [out, r] zero, so an adapted model computes
// exactly what the base model does until B moves. Each projection has a role ("q", "k", "v",
// "o", "gate", "up", "down"), which is what --lora-targets names. Multiply-adds are reported to an
// active FlopCounter, the base weight's as frozen when it does not train. The base product runs
// through LinearCompute (FP8 where the run says so, or from the weight held in a format: QLoRA's
// NF4, features/tuning/qlora.h); the adapters stay in autocast's dtype.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "modeling/linear_compute.h"
#include "modeling/tensor_parallel.h"

namespace gpubench::layers {

class SharedInputProduct;  // modeling/shared_input_products.h

// The role of a language model's output projection onto the vocabulary: no block's projection,
// so neither LoRA's targets nor QLoRA's base; split like the vocabulary (layers::projection).
inline constexpr const char* kVocabularyHeadRole = "head";

class AdaptedLinearImpl : public torch::nn::Module, public QuantizableLinear {
 public:
  // The weight is left uninitialised for the model to draw (and the bias zero). With a
  // tensor-parallel `group`, the layer holds its rank's slice of the [out_features, in_features]
  // weight as `split` says (modeling/tensor_parallel.h) and communicates around it: a
  // column-parallel layer copies its input into the group (once for every layer that reads the
  // same input), a row-parallel one sums its partial output over the group and adds its bias,
  // whole on every rank, once after the sum (Megatron's skip_bias_add). Models build it through
  // layers::projection (modeling/layer_placement.h), which picks the split by role.
  AdaptedLinearImpl(int64_t in_features, int64_t out_features, bool bias, std::string role,
                    tensor_parallel::Split split = tensor_parallel::Split::kNone,
                    tensor_parallel::Group* group = nullptr);

  torch::Tensor forward(const torch::Tensor& input);
  // Adds lora_A and lora_B (float32, trainable) on the weight's device. Sharded, the factor
  // on the unsplit side is whole on every rank (lora_A of a column-parallel layer, lora_B of a
  // row-parallel one) and each rank computes part of its gradient: the part is summed over the
  // group as it arrives.
  void add_adapter(int64_t rank, double alpha);
  bool adapted() const { return lora_a_.defined(); }
  const std::string& role() const { return role_; }
  // One of a repeated block's projections (not a head, which has no role or kVocabularyHeadRole).
  bool in_block() const { return !role_.empty() && role_ != kVocabularyHeadRole; }
  // This rank's.
  int64_t out_features() const { return out_features_; }
  bool hold_weight_in(const WeightFormat& format) override;
  // Its weight held in a format (by itself or by its shared product).
  bool weight_held() const;
  tensor_parallel::Split split() const { return split_; }
  tensor_parallel::Group* group() const { return group_; }
  // The one product this layer's weight is stacked into with its siblings' (inference,
  // modeling/shared_input_products.h); null when it computes alone.
  const std::shared_ptr<SharedInputProduct>& shared_product() const { return shared_; }
  void set_shared_product(std::shared_ptr<SharedInputProduct> product) {
    shared_ = std::move(product);
  }
  int64_t bytes_change_in(const WeightFormat& format) const override {
    return weight_bytes_change(weight, format);
  }

  torch::Tensor weight, bias;

 private:
  int64_t in_features_, out_features_;  // this rank's
  std::string role_;
  tensor_parallel::Split split_;
  tensor_parallel::Group* group_;
  LinearCompute compute_;
  torch::Tensor lora_a_, lora_b_;
  double scaling_ = 0;
  std::shared_ptr<SharedInputProduct> shared_;
};
TORCH_MODULE(AdaptedLinear);

// "q,k,v,o" -> {"q", "k", "v", "o"}, in the order of `roles` ("v,q" -> {"q", "v"});
// "all-linear" -> every role of `roles`. Throws UsageError
// for an empty list, a repeated role or one the model does not have (naming the allowed ones).
std::vector<std::string> parse_lora_targets(const std::string& text,
                                            const std::vector<std::string>& roles,
                                            const std::string& model);

// Whether a parameter (by its name in the model) belongs to an adapter added to the model from
// outside (LoRA's factors, drawn when they are added): a model's initialisation leaves it be.
bool is_adapter_parameter(const std::string& name);

// LoRA as PEFT applies it: every parameter of `module` frozen, then adapters on each
// AdaptedLinear whose role is in `targets`. Returns how many projections got one.
int apply_lora(torch::nn::Module& module, const std::vector<std::string>& targets, int64_t rank,
               double alpha);

}  // namespace gpubench::layers
