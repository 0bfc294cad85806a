// One rule of resolve (run/resolve_benchmark.h): a setting decided, or a request refused, by the
// feature that owns it. Resolve runs the rules in one list, in the order their inputs need.
#pragma once

#include <functional>
#include <string>

#include "modeling/model_registry.h"
#include "settings/benchmark.h"
#include "system/machine.h"

namespace gpubench {

// What every rule reads: the user's request (to tell a given setting from a default), the
// model's registration and this machine.
struct ResolveInputs {
  const BenchmarkRequest& request;
  const ModelInfo& model;
  const MachineFacts& machine;
};

// Fills the settings it owns in `benchmark`, or throws UsageError (a value not allowed, named
// with what is) or Unavailable (what this machine or build lacks).
using ResolveRule = void (*)(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

struct ResolveStep {
  const char* owner;    // the feature or part of the run: "weights", "parallelism", ...
  const char* decides;  // what it decides or refuses, for the generated reference
  ResolveRule rule;
};

// The registered models whose capabilities satisfy `holds`, for a refusal that says where a
// setting does apply.
std::string models_where(const std::function<bool(const ModelCapabilities&)>& holds);
// The models that generate text (ModelCapabilities::generates).
std::string generating_models();

}  // namespace gpubench
