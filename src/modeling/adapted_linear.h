// The linear projections of the fine-tuning models, each with a role ("q", "k", "v", "o", "gate",
// "up", "down"), by which what is applied from outside the model finds it: tensor parallelism's
// split (modeling/layer_groups.h), an adapter added to its output (LoRA's,
// features/tuning/lora.h, by the roles --lora-targets names), a weight format. The base product
// runs through LinearCompute (FP8 where the run says so, or from the weight held in a format:
// QLoRA's NF4, features/tuning/qlora.h); multiply-adds are reported to an active FlopCounter, the
// base weight's as frozen when it does not train.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "modeling/layer_groups.h"
#include "modeling/linear_compute.h"

namespace gpubench::layers {

class SharedInputProduct;  // modeling/shared_input_products.h

// The role of a language model's output projection onto the vocabulary: no block's projection,
// so neither LoRA's targets nor QLoRA's base; split like the vocabulary (layers::projection).
inline constexpr const char* kVocabularyHeadRole = "head";

// What is added to a projection's output from outside the model: given the input as the layer
// reads it (a column-parallel layer's copy in its group), this rank's part of the addition.
class LinearAdapter {
 public:
  virtual ~LinearAdapter() = default;
  virtual torch::Tensor update(const torch::Tensor& input) const = 0;
};

class AdaptedLinearImpl : public torch::nn::Module, public QuantizableLinear {
 public:
  // The weight is left uninitialised for the model to draw (and the bias zero). With a
  // tensor-parallel `group`, the layer holds its rank's slice of the [out_features, in_features]
  // weight as `split` says (modeling/layer_groups.h) and communicates around it: a
  // column-parallel layer copies its input into the group (once for every layer that reads the
  // same input), a row-parallel one sums its partial output over the group and adds its bias,
  // whole on every rank, once after the sum (Megatron's skip_bias_add). Models build it through
  // layers::projection (modeling/layer_placement.h), which picks the split by role.
  AdaptedLinearImpl(int64_t in_features, int64_t out_features, bool bias, std::string role,
                    Split split = Split::kNone, TensorParallelGroup* group = nullptr);

  torch::Tensor forward(const torch::Tensor& input);
  // Its output gains `adapter`'s update (which registers its parameters on this module).
  void set_adapter(std::shared_ptr<const LinearAdapter> adapter) { adapter_ = std::move(adapter); }
  // A parameter of an adapter, registered on this layer under the adapter's name for it (LoRA's
  // lora_A, as PEFT names it): no weight of the model's, so its initialisation leaves it be.
  torch::Tensor& register_adapter_parameter(const std::string& name, torch::Tensor tensor);
  const std::vector<std::string>& adapter_parameter_names() const { return adapter_parameters_; }
  bool adapted() const { return adapter_ != nullptr; }
  const std::string& role() const { return role_; }
  // One of a repeated block's projections (not a head, which has no role or kVocabularyHeadRole).
  bool in_block() const { return !role_.empty() && role_ != kVocabularyHeadRole; }
  // This rank's.
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool hold_weight_in(const WeightFormat& format) override;
  // Its weight held in a format (by itself or by its shared product).
  bool weight_held() const;
  Split split() const { return split_; }
  TensorParallelGroup* group() const { return group_; }
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
  Split split_;
  TensorParallelGroup* group_;
  LinearCompute compute_;
  std::shared_ptr<const LinearAdapter> adapter_;
  std::vector<std::string> adapter_parameters_;
  std::shared_ptr<SharedInputProduct> shared_;
};
TORCH_MODULE(AdaptedLinear);

// The model's own parameters by name: every parameter of `model` but those an adapter added from
// outside (register_adapter_parameter; drawn when added), which its initialisation leaves be.
std::vector<std::pair<std::string, torch::Tensor>> own_parameters(const torch::nn::Module& model);

}  // namespace gpubench::layers
