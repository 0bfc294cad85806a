// The public API from code (include/gpubench/, docs/api.md): one benchmark run in this process
// with run_request, written whole with write_result_file and read back as it was.
#include <gtest/gtest.h>

#include "gpubench/benchmark.h"
#include "gpubench/results.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

TEST(PublicApi, RunRequestRunsHereAndWriteResultFileWritesItWhole) {
  BenchmarkRequest request;
  request.model = "test-tiny-cnn";
  request.device = DeviceKind::kCpu;
  request.batch_size = 2;
  request.warmup_steps = 1;
  request.steps = 2;
  request.repeat = 1;
  request.threads = 1;
  const Result result = run_request(request);
  ASSERT_EQ(result.status, RunStatus::kOk) << result.error;
  EXPECT_GT(result.metrics.throughput, 0);
  testing::ScratchDirectory dir("public-api");
  write_result_file(dir.file("r.json"), result);
  const Result written = read_result_file(dir.file("r.json"));
  EXPECT_EQ(written.benchmark.model, "test-tiny-cnn");
  EXPECT_TRUE(written.benchmark == result.benchmark);
  EXPECT_EQ(written.metrics.trials, result.metrics.trials);
  EXPECT_EQ(testing::read_json(dir.file("r.json"))["status"], "ok");
}

TEST(PublicApi, RunRequestRefusesRanksWithOneLine) {
  BenchmarkRequest request;
  request.model = "test-tiny-cnn";
  request.device = DeviceKind::kCpu;
  request.gpus = 2;
  try {
    run_request(request);
    FAIL() << "two ranks ran in one process";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("run_request runs one process, not 2 ranks"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace gpubench
