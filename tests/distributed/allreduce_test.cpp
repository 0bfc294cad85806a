// The all-reduce sweep's sizes, byte-size parsing and nccl-tests' bus-bandwidth factor.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "distributed/allreduce_benchmark.h"

namespace gpubench {
namespace {

TEST(Allreduce, BusFactorIsTwoTimesNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
}

TEST(Allreduce, SizesRunFromMinToMaxByFactor) {
  AllreduceSweep sweep;
  sweep.min_bytes = 8;
  sweep.max_bytes = 1024;
  EXPECT_EQ(allreduce_sizes(sweep), (std::vector<int64_t>{8, 16, 32, 64, 128, 256, 512, 1024}));
  sweep.min_bytes = 6;  // rounded down to whole float32 elements
  sweep.max_bytes = 100;
  sweep.factor = 4;
  EXPECT_EQ(allreduce_sizes(sweep), (std::vector<int64_t>{4, 24, 96}));
}

TEST(Allreduce, ParsesByteSizes) {
  EXPECT_EQ(parse_byte_size("8", "x"), 8);
  EXPECT_EQ(parse_byte_size("64K", "x"), 65536);
  EXPECT_EQ(parse_byte_size("16M", "x"), 16LL << 20);
  EXPECT_EQ(parse_byte_size("2G", "x"), 2LL << 30);
  EXPECT_THROW(parse_byte_size("", "x"), UsageError);
  EXPECT_THROW(parse_byte_size("-4", "x"), UsageError);
  EXPECT_THROW(parse_byte_size("4T", "x"), UsageError);
  EXPECT_THROW(parse_byte_size("lots", "x"), UsageError);
  EXPECT_THROW(parse_byte_size("2000G", "x"), UsageError);
  EXPECT_EQ(format_byte_size(65536), "64 KiB");
  EXPECT_EQ(format_byte_size(1000), "1000 B");
}

TEST(Allreduce, SweepValidation) {
  AllreduceSweep sweep;
  EXPECT_NO_THROW(validate_sweep(sweep));
  sweep.factor = 1;
  EXPECT_THROW(validate_sweep(sweep), UsageError);
  sweep = {};
  sweep.min_bytes = 2;
  EXPECT_THROW(validate_sweep(sweep), UsageError);
  sweep = {};
  sweep.iters = 0;
  EXPECT_THROW(validate_sweep(sweep), UsageError);
}

// The same rows in every format a person or a script reads: the terminal's and Markdown's under
// the line saying what ran, CSV alone (one header record, a record per size).
TEST(Allreduce, TheTableRendersInEachFormat) {
  AllreduceReport report;
  report.world_size = 2;
  report.backend = "gloo";
  report.device = "cpu";
  report.rows = {{1024, 256, 12.5, 0.082, 0.082, 0}, {2048, 512, 20.0, 0.1024, 0.1024, 0}};
  const std::string heading =
      "all-reduce (sum, in place) over 2 cpu rank(s) on 1 node(s), gloo, 20 iterations per size\n";
  const std::string table = render_allreduce_table(report);
  EXPECT_EQ(table.rfind(heading + "size", 0), 0u) << table;
  EXPECT_NE(table.find("\n1 KiB  1024   256    float32  12.5"), std::string::npos) << table;
  EXPECT_EQ(
      render_allreduce_table(report, "markdown"),
      heading +
          "\n| size | bytes | count | type | time (us) | algbw (GB/s) | busbw (GB/s) | #wrong "
          "|\n| --- | --- | --- | --- | --- | --- | --- | --- |\n"
          "| 1 KiB | 1024 | 256 | float32 | 12.5 | 0.082 | 0.082 | 0 |\n"
          "| 2 KiB | 2048 | 512 | float32 | 20.0 | 0.102 | 0.102 | 0 |\n");
  EXPECT_EQ(render_allreduce_table(report, "csv"),
            "size,bytes,count,type,time (us),algbw (GB/s),busbw (GB/s),#wrong\n"
            "1 KiB,1024,256,float32,12.5,0.082,0.082,0\n"
            "2 KiB,2048,512,float32,20.0,0.102,0.102,0\n");
  EXPECT_THROW(render_allreduce_table(report, "yaml"), std::invalid_argument);
}

}  // namespace
}  // namespace gpubench
