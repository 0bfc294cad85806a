// Results on the terminal, as `train` and `run` print them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "results/result.h"

namespace gpubench {

// One row per result: model, precision, device x count, batch, setup, throughput with its unit,
// step times, trials, status;
// fitted to `max_width` columns where it is not 0 (TextTable::render).
std::string render_results_table(const std::vector<Result>& results, size_t max_width = 0);

// Two lines under a run's table: what its devices drew and how they clocked ("telemetry: ..."),
// and its datasheet entry with the share of peak ("datasheet: ..."), or why there is none.
std::string render_efficiency_lines(const Result& result);

// `--batch-size max`: its probes as one table (batch, outcome, peak, what ran out or failed)
// and the batch found; empty for a run that did not search.
std::string render_batch_search(const BatchSearchInfo& search);

// An inference run's latency (and generation's rates, time to first token, time per output
// token, key/value cache, weights read per decoded token) under its table; empty for a training
// run.
std::string render_inference_lines(const Result& result);
// precision fp8: the share of the products that ran in FP8, and the recipe; empty otherwise.
std::string render_fp8_line(const Result& r);

// A run whose trials spread more than `regress` can gate on at its default threshold, compared
// with another run like it: "warning: noise ..." with what it could see and the trials that would
// do; empty for a quiet run, a failed one, or one of a single trial.
std::string render_noise_line(const Result& r);

}  // namespace gpubench
