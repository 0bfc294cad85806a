// DDP's buckets for a real model's gradients (distributed/gradient_buckets.h): the layout a
// data-parallel ResNet-50 run all-reduces, without starting its ranks (e2e/data_parallel_cli_test
// trains four ranks of a tiny model).
#include <gtest/gtest.h>

#include "distributed/gradient_buckets.h"
#include "modeling/model_registry.h"

namespace gpubench {
namespace {

// ResNet-50's 25,557,032 float32 parameters, last layer first, at DDP's default 25 MiB. A bucket
// closes once it reaches its cap: fc.bias and fc.weight (7.8 MiB) pass the first bucket's 1 MiB;
// three buckets of at least 25 MiB and a last one take the other 89.7 MiB.
TEST(GradientBuckets, ResNet50FillsDdpsFiveBucketsLastLayerFirst) {
  const auto model = ModelRegistry::instance().get("resnet50").instantiate();
  const GradientBuckets layout = assign_gradient_buckets(model->module().parameters(), 25 << 20);
  EXPECT_EQ(layout.total_bytes(), 25557032LL * 4);
  ASSERT_EQ(layout.bytes.size(), 5u);
  EXPECT_EQ(layout.bytes[0], (1000 + 2048 * 1000) * 4) << "fc.bias and fc.weight";
  for (size_t b = 1; b < 4; ++b) EXPECT_GE(layout.bytes[b], 25 << 20) << b;
  EXPECT_LT(layout.bytes[4], 25 << 20);
}

}  // namespace
}  // namespace gpubench
