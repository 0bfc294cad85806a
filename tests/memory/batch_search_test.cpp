// `--batch-size max`: the search against a known threshold from every kind of start (through
// the binary: e2e/batch_search_cli_test.cpp).
#include <gtest/gtest.h>

#include "memory/batch_search.h"

namespace gpubench {
namespace {

TEST(BatchSearch, FindsTheLargestBatchFromAnyStart) {
  for (const int64_t threshold : {1, 2, 7, 64, 100, 1000}) {
    for (const int64_t start : {1, 3, 50, 64, 99, 4096}) {
      std::vector<int64_t> tried;
      const BatchSearchInfo search = search_largest_batch(start, [&](int64_t batch) {
        tried.push_back(batch);
        return BatchProbe{batch, batch <= threshold ? "ok" : "oom", 0, "", ""};
      });
      EXPECT_EQ(search.found_batch, threshold) << "start " << start;
      EXPECT_EQ(search.predicted_batch, start);
      EXPECT_EQ(search.probes.size(), tried.size());
      EXPECT_EQ(tried.front(), start);
      EXPECT_LE(tried.size(), 30u) << "start " << start << " threshold " << threshold;
    }
  }
}

TEST(BatchSearch, NoBatchAndAFailedProbe) {
  const BatchSearchInfo none = search_largest_batch(8, [](int64_t batch) {
    return BatchProbe{batch, "oom", 0, "", ""};
  });
  EXPECT_EQ(none.found_batch, 0);
  EXPECT_EQ(none.probes.back().batch, 1);
  const BatchSearchInfo failed = search_largest_batch(8, [](int64_t batch) {
    return BatchProbe{batch, batch > 8 ? "failed" : "ok", 0, "boom", ""};
  });
  EXPECT_EQ(failed.found_batch, 0);
  EXPECT_EQ(failed.probes.back().outcome, "failed");
}

// As the probes run: 1 warm-up and 1 timed step under the limit.
}  // namespace
// A CPU probe holds to the host's available memory under any --memory-limit; a GPU's to the
// limit (hostile input, round 4: a limit of 1 TiB let a probe grow past 6 GB).
TEST(BatchSearch, ACpuProbeHoldsToTheHostsAvailableMemoryUnderAnyLimit) {
  constexpr int64_t kTiB = int64_t{1} << 40, kGiB = int64_t{1} << 30;
  EXPECT_EQ(probe_memory_limit(kTiB, /*on_host=*/true, 22 * kGiB), 22 * kGiB);
  EXPECT_EQ(probe_memory_limit(8 * kGiB, true, 22 * kGiB), 8 * kGiB);
  EXPECT_EQ(probe_memory_limit(kTiB, true, std::nullopt), kTiB);  // no /proc/meminfo
  EXPECT_EQ(probe_memory_limit(kTiB, /*on_host=*/false, 22 * kGiB), kTiB);
}

}  // namespace gpubench
