#include "reporting/tpot_target.h"

#include <algorithm>
#include <cstdio>

#include "common/text_table.h"

namespace gpubench {
namespace {

std::string batch_text(const Result& r) {
  const InferenceMetrics& m = r.metrics.inference;
  return "batch " + std::to_string(r.benchmark.batch_size) + " (p99 " +
         format_fixed(m.time_per_output_token_ms.p99, 2) + " ms, " +
         format_fixed(m.decode_tokens_per_second, 1) + " tokens/sec)";
}

}  // namespace

std::string tpot_target_verdict(const std::vector<Result>& results, double target_ms) {
  std::vector<const Result*> sweep;
  for (const Result& r : results) {
    if (r.status == RunStatus::kOk && r.metrics.inference.time_per_output_token_ms.count > 0) {
      sweep.push_back(&r);
    }
  }
  std::sort(sweep.begin(), sweep.end(), [](const Result* a, const Result* b) {
    return a->benchmark.batch_size < b->benchmark.batch_size;
  });
  // Two decimals, as every latency here; a target below them in three significant digits, so
  // that --tpot-target-ms 0.001 does not read as 0.00.
  char small[32];
  std::snprintf(small, sizeof(small), "%.3g", target_ms);
  const std::string target = "time per output token target " +
                             (target_ms >= 0.01 ? format_fixed(target_ms, 2) : small) +
                             " ms at p99: ";
  if (sweep.empty()) return target + "no generation result to hold to it";
  const Result* best = nullptr;
  const Result* first_over = nullptr;
  for (const Result* r : sweep) {
    if (r->metrics.inference.time_per_output_token_ms.p99 <= target_ms) {
      best = r;
      first_over = nullptr;
    } else if (first_over == nullptr) {
      first_over = r;
    }
  }
  if (best == nullptr) return target + "no batch meets it; the smallest, " + batch_text(*sweep[0]);
  std::string verdict = target + "the largest batch that meets it is " + batch_text(*best);
  if (first_over != nullptr) verdict += "; " + batch_text(*first_over) + " does not";
  return verdict;
}

}  // namespace gpubench
