// infer --tpot-target-ms: the largest batch of a sweep whose time per output token meets the
// target at p99, the next one that does not, and the sweeps where none does.
#include <gtest/gtest.h>

#include "reporting/tpot_target.h"

namespace gpubench {
namespace {

Result generation(int64_t batch, double p99_ms, double tokens_per_second) {
  Result r;
  r.status = RunStatus::kOk;
  r.benchmark.batch_size = batch;
  r.metrics.inference.present = true;
  r.metrics.inference.time_per_output_token_ms.count = 127;
  r.metrics.inference.time_per_output_token_ms.p99 = p99_ms;
  r.metrics.inference.decode_tokens_per_second = tokens_per_second;
  return r;
}

TEST(TpotTarget, TheLargestBatchUnderTheTargetAndTheNextOverIt) {
  const std::vector<Result> sweep = {generation(64, 40.0, 1599.7), generation(1, 5.4, 185.2),
                                     generation(16, 13.2, 1209.7), generation(4, 6.8, 591.7)};
  EXPECT_EQ(tpot_target_verdict(sweep, 40),
            "time per output token target 40.00 ms at p99: the largest batch that meets it is "
            "batch 64 (p99 40.00 ms, 1599.7 tokens/sec)");
  EXPECT_EQ(tpot_target_verdict(sweep, 20),
            "time per output token target 20.00 ms at p99: the largest batch that meets it is "
            "batch 16 (p99 13.20 ms, 1209.7 tokens/sec); batch 64 (p99 40.00 ms, 1599.7 "
            "tokens/sec) does not");
  EXPECT_EQ(tpot_target_verdict(sweep, 5),
            "time per output token target 5.00 ms at p99: no batch meets it; the smallest, batch 1 "
            "(p99 5.40 ms, 185.2 tokens/sec)");
}

TEST(TpotTarget, FailedRunsAndForwardPassesAreLeftOut) {
  Result failed = generation(128, 1.0, 9999);
  failed.status = RunStatus::kOom;
  Result forward;
  forward.status = RunStatus::kOk;
  forward.benchmark.batch_size = 256;
  EXPECT_EQ(tpot_target_verdict({failed, forward}, 200),
            "time per output token target 200.00 ms at p99: no generation result to hold to it");
  // A target below two decimals keeps its digits (hostile input, round 4: 0.001 read "0.00").
  EXPECT_EQ(tpot_target_verdict({forward}, 0.001),
            "time per output token target 0.001 ms at p99: no generation result to hold to it");
  EXPECT_EQ(tpot_target_verdict({failed, generation(2, 150, 10)}, 200),
            "time per output token target 200.00 ms at p99: the largest batch that meets it is "
            "batch 2 (p99 150.00 ms, 10.0 tokens/sec)");
}

}  // namespace
}  // namespace gpubench
