#include "optim/optimizer_registry.h"

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {

OptimizerRegistry& OptimizerRegistry::instance() {
  static OptimizerRegistry registry;
  return registry;
}

void OptimizerRegistry::add(OptimizerInfo info) {
  optimizers_.push_back(std::move(info));
}

const OptimizerInfo& OptimizerRegistry::get(const std::string& name) const {
  for (const OptimizerInfo& info : optimizers_) {
    if (info.name == name) return info;
  }
  std::string known;
  for (const std::string& each : names()) known += (known.empty() ? "" : ", ") + each;
  throw UsageError("unknown optimizer '" + echoed(name) + "'; known: " + known);
}

std::vector<std::string> OptimizerRegistry::names() const {
  std::vector<std::string> names;
  for (const OptimizerInfo& info : optimizers_) names.push_back(info.name);
  return names;
}

std::string optimizer_for(const std::string& asked, const std::string& models_own) {
  return asked.empty() ? models_own : asked;
}

OptimizerSettings optimizer_settings_for(const std::string& name, int64_t global_batch) {
  return OptimizerRegistry::instance().get(name).settings_for(global_batch);
}

std::unique_ptr<MultiTensorOptimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                     const OptimizerSettings& settings,
                                                     torch::Device device) {
  return OptimizerRegistry::instance()
      .get(settings.name)
      .make(std::move(parameters), settings, device);
}

}  // namespace gpubench
