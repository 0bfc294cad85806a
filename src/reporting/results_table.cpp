#include "reporting/results_table.h"

#include "reporting/text_table.h"

namespace gpubench {

std::string render_results_table(const std::vector<Result>& results) {
  TextTable table({"model", "precision", "device", "gpus", "batch", "throughput", "unit",
                   "step ms p50 [p5-p95]", "trials", "status"});
  for (const Result& r : results) {
    const auto& m = r.metrics;
    const bool ok = r.status == RunStatus::kOk;
    std::string trials;
    for (double t : m.trials) trials += (trials.empty() ? "" : " ") + format_fixed(t, 1);
    table.add_row(
        {r.benchmark.model, to_string(r.benchmark.precision), to_string(r.benchmark.device),
         std::to_string(r.benchmark.gpus), std::to_string(r.benchmark.batch_size),
         ok ? format_fixed(m.throughput, 2) : "-", m.throughput_unit,
         ok ? format_fixed(m.step_time_ms.median, 1) + " [" + format_fixed(m.step_time_ms.p5, 1) +
                  "-" + format_fixed(m.step_time_ms.p95, 1) + "]"
            : "-",
         trials, ok ? "ok" : to_string(r.status) + ": " + r.error});
  }
  return table.render();
}

}  // namespace gpubench
