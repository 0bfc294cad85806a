#include "run/model_setup.h"

#include <optional>

#include "features/tuning/qlora.h"

namespace gpubench {
namespace {

class DefaultDtypeScope {
 public:
  explicit DefaultDtypeScope(std::optional<torch::ScalarType> dtype)
      : previous_(c10::get_default_dtype()) {
    if (dtype) c10::set_default_dtype(c10::scalarTypeToTypeMeta(*dtype));
  }
  ~DefaultDtypeScope() { c10::set_default_dtype(previous_); }
  DefaultDtypeScope(const DefaultDtypeScope&) = delete;
  DefaultDtypeScope& operator=(const DefaultDtypeScope&) = delete;

 private:
  caffe2::TypeMeta previous_;
};

void to_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : module.parameters()) {
    if (parameter.dim() == 4) {
      parameter.set_data(parameter.data().contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
}

}  // namespace

std::unique_ptr<TrainableModel> build_model(const ModelInfo& info, const ModelOptions& options,
                                            const ResolvedBenchmark& benchmark,
                                            const PrecisionPolicy& policy) {
  // Frozen weights (LoRA's base model) and inference weights of the models counted from their
  // configuration are born in the compute dtype: an 8B model never exists in float32.
  const bool low_precision_weights =
      uses_lora(benchmark.tuning) || (benchmark.task == Task::kInfer && info.count);
  const DefaultDtypeScope scope(low_precision_weights ? policy.autocast_dtype() : std::nullopt);
  return info.instantiate(options);
}

void place_model(TrainableModel& model, torch::Device device, const ModelOptions& options,
                 bool channels_last) {
  model.module().to(device);
  if (options.defer_initialization) model.initialize_weights();
  if (options.tuning == Tuning::kQlora) tuning::quantize_bases_nf4(model.module());
  if (channels_last) to_channels_last(model.module());
  model.module().train();
}

}  // namespace gpubench
