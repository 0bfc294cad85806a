// The optimisers a training step can run, registered by name (as models are): each file in
// optim/ that implements one registers it, and a model names the one its reference recipe uses.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "optim/multi_tensor_optimizer.h"

namespace gpubench {

struct OptimizerSettings {
  std::string name = "sgd";
  double learning_rate = 0.1;
  double momentum = 0.9;  // SGD
  double weight_decay = 1e-4;
};

struct OptimizerInfo {
  std::string name;    // "sgd": what models and the result's benchmark name it by
  std::string label;   // "SGD": the result's optimizer before a run describes it in full
  std::string recipe;  // its settings in words, for the models reference
  // Float32 state per trainable parameter, in bytes (SGD's momentum 4; AdamW's moments 8): what
  // the memory plan counts before anything is built.
  int64_t state_bytes_per_parameter = 0;
  // The recipe's settings for a global batch.
  std::function<OptimizerSettings(int64_t global_batch)> settings_for;
  // Over `parameters`, in the fastest implementation for `device`.
  std::function<std::unique_ptr<MultiTensorOptimizer>(std::vector<torch::Tensor> parameters,
                                                      const OptimizerSettings& settings,
                                                      torch::Device device)>
      make;
};

class OptimizerRegistry {
 public:
  static OptimizerRegistry& instance();
  void add(OptimizerInfo info);
  // Throws UsageError naming the known ones for a name that is not registered.
  const OptimizerInfo& get(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<OptimizerInfo> optimizers_;
};

// A static instance of this in an optimiser's file registers it.
struct OptimizerRegistration {
  explicit OptimizerRegistration(OptimizerInfo info) {
    OptimizerRegistry::instance().add(std::move(info));
  }
};

// The optimiser a benchmark trains with: its optimizer setting (`asked`), or the model's own
// where the setting is empty.
std::string optimizer_for(const std::string& asked, const std::string& models_own);

// The settings of optimiser `name`'s recipe for `global_batch`.
OptimizerSettings optimizer_settings_for(const std::string& name, int64_t global_batch);

// The optimiser `settings` name, over `parameters`, in the fastest implementation for `device`.
std::unique_ptr<MultiTensorOptimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                     const OptimizerSettings& settings,
                                                     torch::Device device);

}  // namespace gpubench
