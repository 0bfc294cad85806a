// The history's order: results are ordered by the instant they started, whatever their offset;
// invalid dates are refused; ties are broken by content, so renaming files changes nothing.
#include "results/start_time.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "results/result.h"
#include "results/result_set.h"

namespace gpubench {
namespace {

TEST(StartTime, Rfc3339DateTimesAreInstants) {
  EXPECT_EQ(parse_rfc3339_us("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339_us("1970-01-01T00:00:01.5Z"), 1500000);
  EXPECT_EQ(parse_rfc3339_us("2026-12-01T02:00:00Z"),
            parse_rfc3339_us("2026-11-30T21:00:00-05:00"));
  EXPECT_EQ(parse_rfc3339_us("2026-12-01t02:00:00z"),
            parse_rfc3339_us("2026-12-01 02:00:00+00:00"));
  EXPECT_TRUE(parse_rfc3339_us("2024-02-29T00:00:00Z")) << "a leap day";
  EXPECT_TRUE(parse_rfc3339_us("9999-12-31T23:59:59Z")) << "valid, if far off";
  for (const char* bad : {"2026-13-45T99:99:99Z", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z",
                          "2026-11-30T24:00:00Z", "2026-11-30T02:00:00", "-001-01-01T00:00:00Z",
                          "10000-01-01T00:00:00Z", "2026-11-30T02:00:00+25:00", "2026-11-30",
                          "2026-11-30T02:00:00.Z", "2026-11-30T02:00:00Zjunk", ""}) {
    EXPECT_FALSE(parse_rfc3339_us(bad)) << bad;
  }
}

Result run_at(const std::string& started_at, double throughput) {
  Result r;
  r.benchmark.model = "resnet50";
  r.benchmark.gpus = 1;
  r.benchmark.tensor_parallel = 1;
  r.benchmark.expert_parallel = 1;
  r.benchmark.batch_size = 8;
  r.benchmark.steps = 10;
  r.benchmark.repeat = 1;
  r.benchmark.threads = 1;
  r.benchmark.bucket_mb = 25;
  r.benchmark.timeout_s = 300;
  r.metrics.trials = {throughput};
  r.metrics.throughput = throughput;
  r.started_at = started_at;
  return r;
}

TEST(StartTime, AnOffsetSortsByItsInstantNotItsText) {
  // As text "2026-11-30T21..." sorts before "2026-12-01T01..."; as instants it is an hour later.
  const Result eastern = run_at("2026-11-30T21:00:00-05:00", 100);
  const Result utc = run_at("2026-12-01T01:00:00Z", 200);
  EXPECT_TRUE(started_before(utc, eastern));
  EXPECT_EQ(newest_result({&utc, &eastern}), &eastern);
  EXPECT_EQ(newest_result({&eastern, &utc}), &eastern);
}

TEST(StartTime, TiesAreBrokenByContentWhateverTheFilesOrder) {
  const Result a = run_at("2026-12-01T02:00:00Z", 100), b = run_at("2026-12-01T02:00:00Z", 3851);
  EXPECT_TRUE(started_together(a, b));
  EXPECT_NE(started_before(a, b), started_before(b, a));
  EXPECT_EQ(newest_result({&a, &b}), newest_result({&b, &a}));
}

TEST(StartTime, AResultWithAnInvalidDateIsRefusedNamingTheField) {
  nlohmann::json document = result_to_json(run_at("2026-12-01T02:00:00Z", 10));
  document["started_at"] = "2026-13-45T99:99:99Z";
  try {
    result_from_json(document);
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(
        std::string(error.what()).find("started_at '2026-13-45T99:99:99Z' is not an RFC 3339"),
        std::string::npos)
        << error.what();
  }
  document["started_at"] = "";  // published figures have none
  EXPECT_EQ(result_from_json(document).started_at, "");
}

}  // namespace
}  // namespace gpubench
