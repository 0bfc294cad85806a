// SSD300 v1.1 (models/ssd300.cpp) against the reference built in Python the same way
// (scripts/ssd300_reference.py: DeepLearningExamples' SSD300 on torchvision's resnet50) with
// the LibTorch gpubench links: its parameter count, the default boxes and the matching of
// objects to them, and the training-mode forward's outputs and loss from the same weights and
// inputs. And CUDA graph capture's rule, emulated: no operator in its training step makes the
// host wait for the device.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "modeling/model_registry.h"
#include "models/ssd300.h"
#include "python_reference.h"
#include "recorded_operators.h"

namespace gpubench {
namespace ssd300_tests {
namespace {

namespace ssd = models::ssd300;

// Derived by hand from DeepLearningExamples' ssd/model.py:
//   resnet50's conv1, bn1, layer1-3:                                      8,543,296
//   extra layers, each a 1x1 convolution, batch norm, 3x3 convolution, batch norm (no biases):
//     1024->256->512  262,144 + 512 + 1,179,648 + 1,024 = 1,443,328
//     512->256->512   131,072 + 512 + 1,179,648 + 1,024 = 1,312,256
//     512->128->256    65,536 + 256 +   294,912 +   512 =   361,216
//     256->128->256 (twice) 32,768 + 256 + 294,912 + 512 = 328,448 each     3,773,696
//   heads, 3x3 with bias, 4 + 81 outputs a box, on channels x boxes a cell of 1024 x 4,
//     512 x 6, 512 x 6, 256 x 6, 256 x 4, 256 x 4 (13,824 in all, 30 boxes):
//     13,824 x 9 x 85 + 30 x 85                                           10,577,910
// 22,894,902 in all, which the reference counts too (ReferenceGivesTheSameOutputsAndLoss).
constexpr int64_t kSsd300Parameters = 22'894'902;

TEST(Ssd300, CountsTheReferencesParametersAndItsDefaultBoxes) {
  const ModelInfo& info = ModelRegistry::instance().get("ssd300");
  EXPECT_EQ(measure_model(info).params, kSsd300Parameters);
  EXPECT_EQ(info.family, "convnet");
  EXPECT_EQ(info.default_objects_per_image, 7);
  const torch::Tensor defaults = ssd::default_boxes_xywh();
  ASSERT_EQ(defaults.sizes(), (std::vector<int64_t>{8732, 4}));
  // The first box: cell (0, 0) of the 38x38 map, side 21/300.
  EXPECT_TRUE(
      torch::allclose(defaults[0], torch::tensor({0.5f / 37.5f, 0.5f / 37.5f, 0.07f, 0.07f})));
  // The last: the 1x1 map's box at ratio 1/2 (261/300 x sqrt 2 wide, clamped to 1).
  EXPECT_TRUE(
      torch::allclose(defaults[8731], torch::tensor({0.5f, 0.5f, 0.87f / std::sqrt(2.0f), 1.0f})));
}

torch::Tensor entry(const c10::impl::GenericDict& fixture, const std::string& key) {
  return fixture.at(key).toTensor();
}

TEST(Ssd300, ReferenceGivesTheSameOutputsAndLoss) {
  const auto loaded = testing::python_reference_fixture("ssd300_reference.py");
  if (!loaded) return;
  const c10::impl::GenericDict& fixture = *loaded;
  EXPECT_EQ(entry(fixture, "parameters").item<int64_t>(), kSsd300Parameters);

  // Matching: the same objects give the reference's targets and labels.
  const torch::Tensor defaults_ltrb = ssd::xywh_to_ltrb(ssd::default_boxes_xywh());
  const torch::Tensor objects = entry(fixture, "objects");
  for (int64_t image = 0; image < objects.size(0); ++image) {
    auto [boxes, labels] =
        ssd::match_objects(objects[image], entry(fixture, "classes")[image], defaults_ltrb);
    EXPECT_TRUE(torch::equal(labels, entry(fixture, "labels")[image]));
    EXPECT_TRUE(torch::allclose(boxes.t(), entry(fixture, "boxes")[image], 0, 1e-6));
  }

  auto model = ModelRegistry::instance().get("ssd300").instantiate();
  torch::nn::Module& net = model->module();
  testing::load_state_by_name(net, fixture.at("state").toGenericDict());
  net.train();
  // One thread, as the reference ran: the same kernels in the same order of accumulation (batch
  // norm over the 1x1 map's two values amplifies any rounding difference).
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  const torch::Tensor images = entry(fixture, "images");
  auto [locations, scores] = ssd::detect(net, images);
  EXPECT_TRUE(torch::allclose(locations, entry(fixture, "locations"), 1e-4, 1e-4))
      << (locations - entry(fixture, "locations")).abs().max();
  EXPECT_TRUE(torch::allclose(scores, entry(fixture, "scores"), 1e-4, 1e-4))
      << (scores - entry(fixture, "scores")).abs().max();
  torch::set_num_threads(threads);
  // The loss of those outputs (the model's training step is detect, then this loss).
  const torch::Tensor loss = ssd::loss(locations, scores, entry(fixture, "boxes"),
                                       entry(fixture, "labels"), ssd::default_boxes_xywh());
  EXPECT_NEAR(loss.item<double>(), entry(fixture, "loss").item<double>(),
              1e-4 * entry(fixture, "loss").item<double>());
}

// Operators that copy a device value to the host (item(), a boolean mask's nonzero, ...): on
// CUDA each makes the host wait, and inside a graph capture each fails.
const std::set<std::string> kHostSynchronisingOps = {"aten::_local_scalar_dense",
                                                     "aten::nonzero",
                                                     "aten::masked_select",
                                                     "aten::is_nonzero",
                                                     "aten::_unique2",
                                                     "aten::unique_dim",
                                                     "aten::equal"};

// The step's other half, the network, is convolutions, batch norm and ReLU.
TEST(Ssd300, ItsLossHasNoOperatorThatWaitsForTheDevice) {
  torch::manual_seed(0);
  const torch::Tensor defaults = ssd::default_boxes_xywh();
  const torch::Tensor defaults_ltrb = ssd::xywh_to_ltrb(defaults);
  std::vector<torch::Tensor> boxes, labels;
  for (int image = 0; image < 2; ++image) {
    const torch::Tensor corner = 0.6 * torch::rand({3, 2});
    auto [b, l] = ssd::match_objects(torch::cat({corner, corner + 0.3}, 1),
                                     torch::tensor({1L, 5L, 80L}), defaults_ltrb);
    boxes.push_back(b.t());
    labels.push_back(l);
  }
  const torch::Tensor locations = torch::randn({2, 4, 8732}, torch::requires_grad());
  const torch::Tensor scores = torch::randn({2, 81, 8732}, torch::requires_grad());

  torch::Tensor loss;
  const std::multiset<std::string> seen =
      testing::record_operators([&] {
        loss = ssd::loss(locations, scores, torch::stack(boxes), torch::stack(labels), defaults);
        loss.backward();
      }).called;
  EXPECT_TRUE(seen.count("aten::sort")) << "the recording saw the loss's forward";
  EXPECT_TRUE(seen.count("aten::log_softmax_backward_data") ||
              seen.count("aten::_log_softmax_backward_data"))
      << "and its backward";
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  EXPECT_TRUE(scores.grad().defined());
  for (const std::string& op : kHostSynchronisingOps) EXPECT_EQ(seen.count(op), 0u) << op;
}

}  // namespace
}  // namespace ssd300_tests
}  // namespace gpubench
