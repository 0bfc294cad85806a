#include "launcher/prediction_subject.h"

#include <algorithm>

#include "common/errors.h"
#include "features/weights/weight_rules.h"
#include "infer/inference_model.h"
#include "launcher/launch.h"
#include "run/resolve_benchmark.h"
#include "settings/benchmark_fields.h"
#include "system/machine.h"

namespace gpubench {
namespace {

constexpr int kMostStandIns = 3;  // precision, weights, and one more refusal to report

bool infers(const BenchmarkRequest& request) {
  return request.task == Task::kInfer;
}

// The linear layers' weights a stand-in counts rather than probes, as asked.
struct CountedWeights {
  std::string weights, fp8_recipe;
  int64_t group = 0;
};

// The request changed to what this build or machine can probe for `refused`, with the change
// said in `subject` and the weights it counts in `counted`; false where fit cannot stand in.
bool stand_in(const Unavailable& refused, BenchmarkRequest& request, PredictionSubject& subject,
              std::optional<CountedWeights>& counted) {
  const std::string& lacks = refused.requirement();
  const ResolvedBenchmark defaulted = with_fixed_defaults(request);  // the table's defaults
  const Precision precision = defaulted.precision;
  const std::string weights = defaulted.weights;
  if (lacks == requirement::kCuda && precision == Precision::kFp16) {
    request.precision = Precision::kBf16;
    subject.stand_ins.push_back(
        "precision fp16 probed as bf16, whose elements are as large (fp16's loss scaler holds a "
        "few scalars more): this machine runs fp16 on CUDA only");
    return true;
  }
  if (lacks == requirement::kCuda && precision == Precision::kTf32) {
    request.precision = Precision::kFp32;
    subject.stand_ins.push_back(
        "precision tf32 probed as fp32, whose tensors it computes with (TF32 is a CUDA math "
        "mode)");
    return true;
  }
  const bool integer = layers::is_integer_format(weights);
  if ((lacks == requirement::kLibtorchIntWeights || lacks == requirement::kInt4Kernel) && integer) {
    counted = CountedWeights{weights, "", defaulted.weight_group};
    request.weights = "auto";
    request.weight_group.reset();
    subject.stand_ins.push_back("the linear layers' " + weights +
                                " weights counted in its layout (codes, and scales per output " +
                                (weights == "int4" ? "and group, with zeros" : "channel") +
                                "), probed in the precision's dtype: " + refused.what());
    return true;
  }
  const bool fp8_weights = precision == Precision::kFp8 && (weights == "auto" || weights == "fp8");
  if ((lacks == requirement::kLibtorchFp8 || lacks == requirement::kLibtorchCpuFp8) &&
      fp8_weights && infers(request) && defaulted.kv_cache != "fp8") {
    counted = CountedWeights{"fp8", defaulted.fp8_recipe, 0};
    request.precision = Precision::kBf16;
    request.weights = "auto";
    request.fp8_recipe.reset();
    subject.stand_ins.push_back(
        "precision fp8 probed as bf16, the linear layers' weights counted in FP8 (a byte each and "
        "their scales; the products' FP8 copies of their inputs, a byte an element of one "
        "layer's input at a time, left out): " +
        std::string(refused.what()));
    return true;
  }
  return false;
}

}  // namespace

PredictionSubject resolve_for_prediction(const BenchmarkRequest& request) {
  PredictionSubject subject;
  std::optional<CountedWeights> counted;
  BenchmarkRequest probed = request;
  for (int tries = 0;; ++tries) {
    try {
      subject.probed = resolve_here(probed, /*warn_on_cpu_fallback=*/false);
      break;
    } catch (const Unavailable& refused) {
      if (tries < kMostStandIns && stand_in(refused, probed, subject, counted)) continue;
      if (probed.precision == Precision::kFp8 && !infers(probed)) {
        throw Unavailable(refused.requirement(),
                          std::string(refused.what()) +
                              "; fit measures FP8 training's quantisation temporaries by running "
                              "them, and stands in no other precision for them");
      }
      throw;
    }
  }
  // The probes stand for one rank in one process: they run on every core here, where CPU ranks
  // would share them (threads change no tensor's bytes; gpt-oss-120b's --expert-parallel 8 fit
  // over 8 ranks' one thread each took half as long again).
  if (!request.threads) subject.probed.threads = std::max(1, read_machine_facts().cpu_cores);
  // What was asked: the probed benchmark with the asked precision and counted weights.
  subject.asked = subject.probed;
  subject.asked.precision = request.precision.value_or(subject.probed.precision);
  if (counted) {
    subject.asked.weights = counted->weights;
    subject.asked.fp8_recipe = counted->fp8_recipe;
    subject.asked.weight_group = counted->group;
    subject.counted_weights = linear_weights_format(counted->weights, subject.asked.precision,
                                                    counted->group, counted->fp8_recipe);
    if (counted->weights == "int4") {
      weights::check_int4_shapes(ModelRegistry::instance().get(subject.asked.model), subject.asked);
    }
  }
  return subject;
}

}  // namespace gpubench
