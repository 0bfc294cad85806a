// Mask R-CNN ResNet-50-FPN (models/mask_rcnn.cpp) against torchvision's own MaskRCNN built by
// scripts/maskrcnn_reference.py with the LibTorch gpubench links: its parameter count (and what
// its frozen stages leave to train), and from the reference's state dict (loaded by name), its
// images and objects and the same seed before the forward (the samplers draw from it), the five
// training losses. Graph mode is refused, saying why.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <string>

#include "common/errors.h"
#include "modeling/model_registry.h"
#include "models/mask_rcnn.h"
#include "python_reference.h"
#include "run/resolve_benchmark.h"

namespace gpubench {
namespace mask_rcnn_tests {
namespace {

namespace mrcnn = models::mask_rcnn;

// torchvision's documented num_params for maskrcnn_resnet50_fpn; conv1 (9,408) and layer1
// (212,992) do not train.
constexpr int64_t kParameters = 44'401'393;
constexpr int64_t kTrainable = 44'178'993;

// Counted on an instance without its FLOPs (a forward at 800x1333 takes seconds on the CPU); the
// tiny model, the same network on 96x128 images with fewer proposals, counts them.
TEST(MaskRcnn, CountsTorchvisionsParametersAndTrainsAllButTheFrozenStages) {
  const ModelInfo& info = ModelRegistry::instance().get("maskrcnn");
  auto model = info.instantiate();
  int64_t params = 0, trainable = 0;
  for (const torch::Tensor& parameter : model->module().parameters()) {
    params += parameter.numel();
    if (parameter.requires_grad()) trainable += parameter.numel();
  }
  EXPECT_EQ(params, kParameters);
  EXPECT_EQ(trainable, kTrainable);
  EXPECT_EQ(info.family, "convnet");
  EXPECT_EQ(info.input_shape, (std::vector<int64_t>{3, 800, 1333}));
  const ModelStats tiny = measure_model(ModelRegistry::instance().get("test-tiny-maskrcnn"));
  EXPECT_EQ(tiny.params, kParameters);
  EXPECT_EQ(tiny.trainable_params, kTrainable);
  EXPECT_GT(tiny.forward_flops, 0);
}

TEST(MaskRcnn, TorchvisionsLossesFromTheSameWeightsInputsAndSeed) {
  const auto loaded = testing::python_reference_fixture("maskrcnn_reference.py");
  if (!loaded) return;
  const c10::impl::GenericDict& fixture = *loaded;
  const auto entry = [&](const char* key) { return fixture.at(key).toTensor(); };
  EXPECT_EQ(entry("parameters").item<int64_t>(), kParameters);
  EXPECT_EQ(entry("trainable").item<int64_t>(), kTrainable);

  // torchvision's configuration at the fixture's 96x128 (test-tiny-maskrcnn keeps fewer
  // proposals).
  const std::shared_ptr<torch::nn::Module> network = mrcnn::network(96, 128);
  torch::nn::Module& net = *network;
  testing::load_state_by_name(net, fixture.at("state").toGenericDict());
  net.train();
  std::vector<mrcnn::Targets> targets;
  for (int64_t i = 0; i < 2; ++i) {
    targets.push_back({entry("boxes")[i], entry("labels")[i], entry("masks")[i]});
  }
  // One thread, as the reference ran: the same kernels in the same order, so that NMS and the
  // top-k see the same scores.
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  torch::manual_seed(entry("seed").item<int64_t>());
  const mrcnn::Losses losses = mrcnn::training_losses(net, entry("images").unbind(0), targets);
  torch::set_num_threads(threads);
  for (const auto& [name, value] : {std::pair{"loss_classifier", losses.classifier},
                                    {"loss_box_reg", losses.box_reg},
                                    {"loss_mask", losses.mask},
                                    {"loss_objectness", losses.objectness},
                                    {"loss_rpn_box_reg", losses.rpn_box_reg}}) {
    const double expected = entry(name).item<double>();
    EXPECT_NEAR(value.item<double>(), expected, 1e-4 * std::abs(expected)) << name;
  }
}

TEST(MaskRcnn, GraphModeIsRefusedBecauseTheDataChoosesTheProposals) {
  BenchmarkRequest request;
  request.model = "maskrcnn";
  request.mode = Mode::kGraph;
  request.device = DeviceKind::kCuda;
  MachineFacts machine;
  machine.cuda_available = true;
  machine.cuda_device_count = 1;
  machine.cuda_compute_capability = 90;
  machine.cpu_cores = 2;
  try {
    resolve(request, machine);
    ADD_FAILURE() << "graph mode resolved for maskrcnn";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("graph mode cannot capture maskrcnn's training step: its proposals are "
                        "chosen by the data"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace mask_rcnn_tests
}  // namespace gpubench
