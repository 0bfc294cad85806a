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

}  // namespace
}  // namespace gpubench
