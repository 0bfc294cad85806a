// What both renderings of `gpubench scale` write of their input (scaling_render.cpp,
// tensor_parallel_render.cpp): the result it came from, its shape and its one-device figures.
#pragma once

#include <nlohmann/json.hpp>

#include "features/parallelism/scaling/scaling_prediction.h"

namespace gpubench {

nlohmann::json scale_input_json(const ScaleInput& input);

}  // namespace gpubench
