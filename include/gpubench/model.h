// Bring your own model (docs/api.md): a model is a TrainableModel (its module, a synthetic batch
// on the device, its loss) described by a ModelInfo (name, family, unit, default batch, how to
// build it), registered by name. Registered, it runs with every gpubench feature: precisions,
// data parallel, graph mode, memory breakdown and `fit`, telemetry, result files and reports.
//
//   GPUBENCH_REGISTER_MODEL(gpubench::image_classifier_info<MyNet>(
//       "my-net", {}, 224, 64, "my reference", [](int64_t classes) { return MyNet(classes); }));
#pragma once

#include "modeling/image_classifier.h"
#include "modeling/layers.h"  // Conv2d and Linear that count their FLOPs
#include "modeling/model_registry.h"

#define GPUBENCH_CONCATENATE_(a, b) a##b
#define GPUBENCH_CONCATENATE(a, b) GPUBENCH_CONCATENATE_(a, b)

// Registers the ModelInfo the arguments make, at start-up, as each model of the zoo does. At
// namespace scope in a source file linked into the executable.
#define GPUBENCH_REGISTER_MODEL(...)                                                              \
  static const ::gpubench::ModelRegistration GPUBENCH_CONCATENATE(gpubench_model_, __COUNTER__) { \
    __VA_ARGS__                                                                                   \
  }
