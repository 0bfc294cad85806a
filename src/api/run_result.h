// A result as the public API gives it (include/gpubench/results.h).
#pragma once

#include "gpubench/results.h"
#include "results/result.h"

namespace gpubench {

RunResult run_result_of(const Result& result);

}  // namespace gpubench
