// The inference block of a result: latency percentiles against a hand-computed fixture, and the
// block through JSON and back.
#include "results/inference_info.h"

#include <gtest/gtest.h>

#include "results/result.h"

namespace gpubench {
namespace {

TEST(LatencySummary, PercentilesInterpolateBetweenOrderStatistics) {
  // 20 requests of 1..20 ms, shuffled: p50 at rank 9.5 (0-based) = 10.5, p90 at 17.1 = 18.1,
  // p99 at 18.81 = 19.81, max 20, mean 10.5 (numpy.percentile gives the same).
  const std::vector<double> ms = {7,  3,  20, 1,  14, 9,  12, 5,  18, 2,
                                  16, 11, 4,  19, 6,  13, 8,  17, 10, 15};
  const LatencySummary s = summarize_latency(ms);
  EXPECT_EQ(s.count, 20);
  EXPECT_DOUBLE_EQ(s.p50, 10.5);
  EXPECT_NEAR(s.p90, 18.1, 1e-12);
  EXPECT_NEAR(s.p99, 19.81, 1e-12);
  EXPECT_DOUBLE_EQ(s.max, 20);
  EXPECT_DOUBLE_EQ(s.mean, 10.5);
  // One request: every percentile is it.
  const LatencySummary one = summarize_latency({4.25});
  EXPECT_DOUBLE_EQ(one.p50, 4.25);
  EXPECT_DOUBLE_EQ(one.p99, 4.25);
  EXPECT_EQ(summarize_latency({}).count, 0);
}

TEST(InferenceInfo, TravelsThroughTheResultFile) {
  Result r = read_result_file(std::string(GPUBENCH_SOURCE_DIR) +
                              "/tests/fixtures/reports/a40_resnet50_fp16_x1.json");
  r.benchmark.model = "test-tiny-llama";
  r.benchmark.task = Task::kInfer;
  r.benchmark.prompt_len = 16;
  r.benchmark.gen_len = 8;
  r.benchmark.threads = 1;
  r.metrics.throughput = 100;
  r.metrics.trials = {99, 100, 101};
  r.metrics.throughput_unit = "tokens/sec";
  InferenceMetrics& m = r.metrics.inference;
  m.present = true;
  m.request_latency_ms = summarize_latency({10, 12});
  m.prefill_tokens_per_second = 5000;
  m.decode_tokens_per_second = 100;
  m.time_to_first_token_ms = summarize_latency({1, 2});
  m.time_per_output_token_ms = summarize_latency({1.5, 1.25, 1.75});
  m.kv_cache_bytes = 12288;
  m.kv_cache_bytes_per_token = 256;
  m.kv_cache_converted_per_step = true;
  m.bytes_per_decoded_token = 4096;
  m.kernels_per_decode_step = 332;
  const Result back = result_from_json(result_to_json(r));
  EXPECT_EQ(back.benchmark.task, Task::kInfer);
  EXPECT_EQ(back.benchmark.prompt_len, 16);
  EXPECT_EQ(back.benchmark.gen_len, 8);
  const InferenceMetrics& b = back.metrics.inference;
  ASSERT_TRUE(b.present);
  EXPECT_DOUBLE_EQ(b.request_latency_ms.p50, 11);
  EXPECT_DOUBLE_EQ(b.time_per_output_token_ms.max, 1.75);
  EXPECT_DOUBLE_EQ(b.decode_tokens_per_second, 100);
  EXPECT_EQ(b.kv_cache_bytes, 12288);
  EXPECT_EQ(b.kv_cache_bytes_per_token, 256);
  EXPECT_FALSE(b.kv_cache_reallocated);
  EXPECT_TRUE(b.kv_cache_converted_per_step);
  EXPECT_EQ(b.kernels_per_decode_step, 332);
  // Not counted (eager mode, the CPU): absent from the file.
  Result eager = r;
  eager.metrics.inference.kernels_per_decode_step = 0;
  EXPECT_FALSE(result_to_json(eager)["metrics"]["inference"].contains("kernels_per_decode_step"));
  // A training result has no inference block.
  Result training = r;
  training.benchmark.task = Task::kTrain;
  training.metrics.inference = {};
  EXPECT_FALSE(result_to_json(training)["metrics"].contains("inference"));
  EXPECT_FALSE(result_from_json(result_to_json(training)).metrics.inference.present);
}

}  // namespace
}  // namespace gpubench
