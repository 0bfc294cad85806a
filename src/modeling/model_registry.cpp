#include "modeling/model_registry.h"

#include <algorithm>

#include "common/closest_name.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "modeling/flop_counter.h"
#include "modeling/model_transforms.h"
#include "modeling/weight_formats.h"
#include "testing/test_hooks.h"

namespace gpubench {

std::unique_ptr<TrainableModel> ModelInfo::instantiate(const ModelOptions& options) const {
  std::unique_ptr<TrainableModel> model = create(options);
  apply_model_transforms(*model, options);
  return model;
}

ModelRegistry& ModelRegistry::instance() {
  static ModelRegistry registry;
  return registry;
}

void ModelRegistry::add(ModelInfo info) {
  models_.push_back(std::make_unique<ModelInfo>(std::move(info)));
}

const ModelInfo* ModelRegistry::find(const std::string& name_or_alias) const {
  for (const auto& model : models_) {
    if (model->hidden && !test_hooks_enabled()) continue;
    if (model->name == name_or_alias) return model.get();
    const auto& aliases = model->aliases;
    if (std::find(aliases.begin(), aliases.end(), name_or_alias) != aliases.end()) {
      return model.get();
    }
  }
  return nullptr;
}

const ModelInfo& ModelRegistry::get(const std::string& name_or_alias) const {
  if (const ModelInfo* info = find(name_or_alias)) return *info;
  for (const auto& model : models_) {
    if (model->hidden && model->name == name_or_alias) {
      throw UsageError("model '" + model->name +
                       "' is one of gpubench's test models, found only where "
                       "GPUBENCH_TEST_HOOKS=1 is set");
    }
  }
  std::vector<std::string> known;
  for (const ModelInfo* model : all()) {
    known.push_back(model->name);
    known.insert(known.end(), model->aliases.begin(), model->aliases.end());
  }
  throw UsageError("unknown model '" + echoed(name_or_alias) + "';" +
                   did_you_mean(name_or_alias, known) + " known: " + join(names()));
}

std::vector<const ModelInfo*> ModelRegistry::all() const {
  std::vector<const ModelInfo*> out;
  for (const auto& model : models_) {
    if (!model->hidden) out.push_back(model.get());
  }
  std::sort(out.begin(), out.end(),
            [](const ModelInfo* a, const ModelInfo* b) { return a->name < b->name; });
  return out;
}

std::vector<std::string> ModelRegistry::names() const {
  std::vector<std::string> out;
  for (const ModelInfo* model : all()) out.push_back(model->name);
  return out;
}

std::string ModelRegistry::names_where(
    const std::function<bool(const ModelCapabilities&)>& holds) const {
  std::vector<std::string> out;
  for (const ModelInfo* model : all()) {
    if (holds(model->capabilities)) out.push_back(model->name);
  }
  return join(out);
}

std::string to_string(SyntheticInput input) {
  switch (input) {
    case SyntheticInput::kImages:
      return "images";
    case SyntheticInput::kTokenSegments:
      return "token segments";
    case SyntheticInput::kTokenSequences:
      return "token sequences";
    case SyntheticInput::kDetectionImages:
      return "images with boxes";
  }
  return "";
}

bool ModelCapabilities::holds_weights_in(const std::string& format) const {
  if (layers::is_integer_format(format)) return holds_integer_weights();
  return std::find(weight_formats.begin(), weight_formats.end(), format) != weight_formats.end();
}

std::vector<std::string> ModelCapabilities::held_weight_formats() const {
  std::vector<std::string> formats = weight_formats;
  if (!holds_integer_weights()) return formats;
  for (const std::string& name : layers::WeightFormatRegistry::instance().names_where(
           [](const layers::WeightFormatInfo& format) { return format.integer_codes; })) {
    formats.push_back(name);
  }
  return formats;
}

std::string ModelInfo::throughput_unit(Task run_task) const {
  return (run_task == Task::kInfer && capabilities.generates ? std::string("tokens")
                                                             : sample_unit) +
         "/sec";
}

namespace {

// Mask R-CNN's proposals and Transformer-XL's adaptive softmax depend on the weights and the data
// drawn, and so do their FLOPs: an instance counted for its figures is drawn from this seed, the
// same in every process, and the caller's random stream is left as it was.
constexpr uint64_t kCountingSeed = 42;

class CountingSeed {
 public:
  CountingSeed() : generator_(at::detail::getDefaultCPUGenerator()) {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    kept_ = generator_.get_state();
    generator_.set_current_seed(kCountingSeed);
  }
  ~CountingSeed() {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    generator_.set_state(kept_);
  }
  CountingSeed(const CountingSeed&) = delete;
  CountingSeed& operator=(const CountingSeed&) = delete;

 private:
  at::Generator generator_;
  torch::Tensor kept_;
};

}  // namespace

ModelStats measure_model(const ModelInfo& info, const ModelOptions& options) {
  if (info.count) return info.count(options);
  const CountingSeed seed;
  return measure_instance(*info.instantiate(options));
}

ModelInfo with_default_counts(ModelInfo info, int64_t params, int64_t trainable_params,
                              int64_t forward_flops, int64_t frozen_weight_flops) {
  ModelStats counts;
  counts.params = params;
  counts.trainable_params = trainable_params;
  counts.forward_flops = forward_flops;
  counts.frozen_weight_flops = frozen_weight_flops;
  info.default_counts = counts;
  return info;
}

ModelStats listed_counts(const ModelInfo& info) {
  if (!info.count && info.default_counts) return *info.default_counts;
  return measure_model(info);
}

ModelStats measure_instance(TrainableModel& model) {
  torch::NoGradGuard no_grad;
  ModelStats stats;
  for (const auto& parameter : model.module().parameters()) {
    stats.params += parameter.numel();
    if (parameter.requires_grad()) stats.trainable_params += parameter.numel();
  }
  const bool was_training = model.module().is_training();
  model.module().eval();
  FlopCounter counter;
  const int64_t samples = model.count_forward();
  model.module().train(was_training);
  stats.forward_flops = counter.flops() / samples;
  stats.frozen_weight_flops = counter.frozen_weight_flops() / samples;
  return stats;
}

}  // namespace gpubench
