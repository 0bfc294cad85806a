// torchvision's operators loaded from beside the LibTorch in use (torch_support/vision_ops.h):
// Debian's python3-torchvision with Debian's LibTorch, the wheel's with the wheel's (whose _C
// needs libtorch_python and libpython opened first); each called through the dispatcher and
// checked against values worked by hand.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "torch_support/vision_ops.h"

namespace gpubench {
namespace vision_ops_tests {
namespace {

TEST(VisionOps, LoadsTorchvisionsOperatorsForTheLibTorchInUse) {
  const std::string& path = vision_ops::require("the test");
  EXPECT_NE(path.find("torchvision/_C"), std::string::npos) << path;
  // Loaded once: a second call names the same file.
  EXPECT_EQ(&vision_ops::require("the test"), &path);
}

TEST(VisionOps, NmsKeepsTheBestOfEachOverlappingGroup) {
  // Boxes 0 and 1 overlap with IoU 81/119 = 0.68; box 2 overlaps neither.
  const torch::Tensor boxes = torch::tensor({{0.f, 0.f, 10.f, 10.f},
                                             {1.f, 1.f, 11.f, 11.f},
                                             {20.f, 20.f, 30.f, 30.f},
                                             {0.5f, 0.f, 10.5f, 10.f}});
  const torch::Tensor scores = torch::tensor({0.8f, 0.9f, 0.7f, 0.6f});
  EXPECT_TRUE(torch::equal(vision_ops::nms(boxes, scores, 0.5), torch::tensor({1L, 2L})));
  // Above the overlap of 0 and 1, both stay; 3 overlaps 0 by 0.9 and goes.
  EXPECT_TRUE(torch::equal(vision_ops::nms(boxes, scores, 0.7), torch::tensor({1L, 0L, 2L})));
}

// On a map whose value is its x coordinate, bilinear samples are exact, and each bin's average
// is the mean of its samples' x: the box from x 0.5 to 4.5 (aligned: less half a pixel) in two
// bins of two samples each gives 1.5 and 3.5.
TEST(VisionOps, RoiAlignAveragesBilinearSamplesAndHasAGradient) {
  const torch::Tensor ramp =
      torch::arange(8, torch::kFloat).repeat({8, 1}).reshape({1, 1, 8, 8}).requires_grad_();
  const torch::Tensor rois = torch::tensor({{0.f, 1.f, 1.f, 5.f, 3.f}});
  const torch::Tensor pooled = vision_ops::roi_align(ramp, rois, 1.0, 2, 2, 2, true);
  ASSERT_EQ(pooled.sizes(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_TRUE(torch::allclose(pooled.reshape({2, 2}), torch::tensor({{1.5f, 3.5f}, {1.5f, 3.5f}})));
  pooled.sum().backward();
  // Every sample lies inside the map, and each output's weights sum to 1.
  EXPECT_NEAR(ramp.grad().sum().item<double>(), 4.0, 1e-5);
}

// Under bf16 and fp16, torchvision's autocast kernels run both in float32 on CUDA; its CPU kernels
// have no bfloat16 at all. gpubench computes them in float32 on every device, so a bf16 run on the
// CPU (the GPU check's rehearsal) takes the path a GPU's does.
TEST(VisionOps, BfloatInputsAreComputedInFloat32AsAutocastDoesOnCuda) {
  const torch::Tensor boxes = torch::tensor({{0.f, 0.f, 10.f, 10.f}, {1.f, 1.f, 11.f, 11.f}});
  const torch::Tensor scores = torch::tensor({0.8f, 0.9f});
  EXPECT_TRUE(
      torch::equal(vision_ops::nms(boxes.to(torch::kBFloat16), scores.to(torch::kBFloat16), 0.5),
                   torch::tensor({1L})));
  const torch::Tensor ramp =
      torch::arange(8, torch::kFloat).repeat({8, 1}).reshape({1, 1, 8, 8}).to(torch::kBFloat16);
  const torch::Tensor rois = torch::tensor({{0.f, 1.f, 1.f, 5.f, 3.f}}).to(torch::kBFloat16);
  const torch::Tensor pooled = vision_ops::roi_align(ramp, rois, 1.0, 2, 2, 2, true);
  EXPECT_EQ(pooled.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(pooled.reshape({2, 2}).to(torch::kFloat),
                              torch::tensor({{1.5f, 3.5f}, {1.5f, 3.5f}})));
}

}  // namespace
}  // namespace vision_ops_tests
}  // namespace gpubench
