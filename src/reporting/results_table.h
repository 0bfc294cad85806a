// Results on the terminal, as `train` and `run` print them.
#pragma once

#include <string>
#include <vector>

#include "results/result.h"

namespace gpubench {

// One row per result: model, precision, device, batch, throughput, step times, trials, status.
std::string render_results_table(const std::vector<Result>& results);

}  // namespace gpubench
