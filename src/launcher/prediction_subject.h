// What `gpubench fit` predicts and what its probes run (docs/memory.md, "Counted, not probed"): the
// asked benchmark resolved here, or where this build or machine cannot run a setting whose memory
// fit can still count, a stand-in it can probe. A prediction needs neither the kernel nor the
// device: fp16 is probed as bf16 and tf32 as fp32 (the same element sizes), and int8, int4 and
// fp8 weights are probed in the precision's dtype and counted in their format's layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "modeling/linear_compute.h"
#include "settings/benchmark.h"

namespace gpubench {

struct PredictionSubject {
  ResolvedBenchmark probed;  // what the probes run
  ResolvedBenchmark asked;   // the same with the asked precision and weights: what is predicted
  // The linear layers' weights counted in this format rather than probed (FitOptions).
  std::shared_ptr<const layers::WeightFormat> counted_weights;  // null: none
  // Each stand-in, said: "precision fp16 probed as bf16 (...)".
  std::vector<std::string> stand_ins;
};

// Throws what resolve throws where no stand-in applies (Unavailable for FP8 training without its
// kernels, whose quantisation temporaries only a probe that runs them measures).
PredictionSubject resolve_for_prediction(const BenchmarkRequest& request);

}  // namespace gpubench
