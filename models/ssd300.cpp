// SSD300 v1.1 as NVIDIA DeepLearningExamples' PyTorch/Detection/SSD builds and trains it (the
// model Lambda's convnet average runs): torchvision's ResNet-50 up to layer3, whose first block
// has stride 1 so that it keeps 38x38; five extra feature layers; 3x3 location and confidence
// heads on the six maps (4, 6, 6, 6, 4, 4 default boxes a cell: 8,732 in all); 81 COCO classes.
// Its loss is smooth L1 on the matched boxes' offsets plus cross-entropy over the positive boxes
// and three times as many hard negatives, per image over its positives, averaged over the batch.
// Module names are the reference's (feature_extractor.feature_extractor.N, additional_blocks,
// loc, conf), so that its state dict loads by name.
//
// The reference's data pipeline matches each image's boxes to the default boxes (IoU over 0.5,
// and every box to its best default box) before the step; here the synthetic objects are drawn
// and matched once, and the step is the reference's: forward, .float(), the loss.
#include <cmath>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "modeling/detection_boxes.h"
#include "modeling/layers.h"
#include "modeling/model_registry.h"
#include "modeling/synthetic_objects.h"
#include "models/resnet.h"
#include "models/ssd300.h"

namespace gpubench {
namespace models::ssd300 {
namespace {

constexpr int64_t kImageSize = 300;
constexpr int64_t kClasses = 81;  // COCO's 80 and the background
constexpr double kMatchIou = 0.5;
// The encoded offsets' scales: the loss divides the centre offset by 0.1 and the log size by 0.2.
constexpr double kScaleXy = 0.1;
constexpr double kScaleWh = 0.2;
constexpr int64_t kNegativesPerPositive = 3;

}  // namespace

// dboxes300_coco(): per feature map its size, step and scales, and the aspect ratios beyond 1;
// each cell has boxes of the map's scale, of the geometric mean with the next scale, and of the
// map's scale at each ratio and its inverse. [8732, 4] (cx, cy, w, h), clamped to [0, 1].
torch::Tensor default_boxes_xywh() {
  const std::vector<int64_t> feature_sizes = {38, 19, 10, 5, 3, 1};
  const std::vector<double> steps = {8, 16, 32, 64, 100, 300};
  const std::vector<double> scales = {21, 45, 99, 153, 207, 261, 315};
  const std::vector<std::vector<double>> ratios = {{2}, {2, 3}, {2, 3}, {2, 3}, {2}, {2}};
  std::vector<float> boxes;
  for (size_t level = 0; level < feature_sizes.size(); ++level) {
    const double fk = kImageSize / steps[level];
    const double small = scales[level] / kImageSize;
    const double between = std::sqrt(small * scales[level + 1] / kImageSize);
    std::vector<std::pair<double, double>> sizes = {{small, small}, {between, between}};
    for (const double alpha : ratios[level]) {
      const double w = small * std::sqrt(alpha);
      const double h = small / std::sqrt(alpha);
      sizes.emplace_back(w, h);
      sizes.emplace_back(h, w);
    }
    const int64_t cells = feature_sizes[level];
    for (const auto& [w, h] : sizes) {
      for (int64_t i = 0; i < cells; ++i) {
        for (int64_t j = 0; j < cells; ++j) {
          for (const double v : {(j + 0.5) / fk, (i + 0.5) / fk, w, h}) {
            boxes.push_back(static_cast<float>(v));
          }
        }
      }
    }
  }
  return torch::tensor(boxes).reshape({-1, 4}).clamp_(0, 1);
}

torch::Tensor xywh_to_ltrb(const torch::Tensor& xywh) {
  const torch::Tensor centre = xywh.narrow(1, 0, 2);
  const torch::Tensor half = 0.5 * xywh.narrow(1, 2, 2);
  return torch::cat({centre - half, centre + half}, 1);
}

// The reference's Encoder.encode: each default box takes the object it overlaps most where the
// IoU is over 0.5, and each object its best default box whatever the IoU. Returns the default
// boxes' targets [8732, 4] (cx, cy, w, h: the matched object's, or the default box itself) and
// labels [8732] (0: background).
std::pair<torch::Tensor, torch::Tensor> match_objects(const torch::Tensor& objects_ltrb,
                                                      const torch::Tensor& labels,
                                                      const torch::Tensor& defaults_ltrb) {
  const torch::Tensor ious = detection::box_iou(objects_ltrb, defaults_ltrb);
  auto [best_object_iou, best_object] = ious.max(0);
  const torch::Tensor best_default = std::get<1>(ious.max(1));
  best_object_iou.index_fill_(0, best_default, 2.0);
  best_object.index_put_({best_default}, torch::arange(objects_ltrb.size(0)));
  const torch::Tensor matched = best_object_iou > kMatchIou;
  torch::Tensor labels_out = torch::zeros({defaults_ltrb.size(0)}, torch::kLong);
  labels_out.index_put_({matched}, labels.index({best_object.index({matched})}));
  torch::Tensor boxes = defaults_ltrb.clone();
  boxes.index_put_({matched}, objects_ltrb.index({best_object.index({matched})}));
  const torch::Tensor centre = 0.5 * (boxes.narrow(1, 0, 2) + boxes.narrow(1, 2, 2));
  const torch::Tensor size = boxes.narrow(1, 2, 2) - boxes.narrow(1, 0, 2);
  return {torch::cat({centre, size}, 1), labels_out};
}

namespace {

torch::nn::Sequential extra_layer(int64_t in, int64_t middle, int64_t out, bool strided) {
  auto conv = [](int64_t from, int64_t to, int64_t kernel, int64_t stride, int64_t padding) {
    return layers::Conv2d(
        torch::nn::Conv2dOptions(from, to, kernel).stride(stride).padding(padding).bias(false));
  };
  return torch::nn::Sequential(conv(in, middle, 1, 1, 0), torch::nn::BatchNorm2d(middle),
                               torch::nn::ReLU(torch::nn::ReLUOptions(true)),
                               conv(middle, out, 3, strided ? 2 : 1, strided ? 1 : 0),
                               torch::nn::BatchNorm2d(out),
                               torch::nn::ReLU(torch::nn::ReLUOptions(true)));
}

// The reference's ResNet class: torchvision's resnet50 children up to layer3, layer3's first
// block at stride 1. The tiny test model's: one strided convolution to the same 38x38.
class SsdBackboneImpl : public torch::nn::Module {
 public:
  explicit SsdBackboneImpl(bool tiny) {
    torch::nn::Sequential layers;
    if (tiny) {
      layers = torch::nn::Sequential(
          layers::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).stride(8).padding(1).bias(false)),
          torch::nn::BatchNorm2d(16), torch::nn::ReLU(torch::nn::ReLUOptions(true)));
    } else {
      int64_t in_planes = 64;
      layers = torch::nn::Sequential(
          models::resnet_conv(3, 64, 7, 2, 3), torch::nn::BatchNorm2d(64),
          torch::nn::ReLU(torch::nn::ReLUOptions(true)),
          torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).padding(1)));
      layers->push_back(models::resnet_stage(in_planes, 64, 3, 1));
      layers->push_back(models::resnet_stage(in_planes, 128, 4, 2));
      layers->push_back(models::resnet_stage(in_planes, 256, 6, 1));
    }
    feature_extractor = register_module("feature_extractor", layers);
    models::initialize_resnet(*this);
  }
  torch::Tensor forward(const torch::Tensor& x) { return feature_extractor->forward(x); }

  torch::nn::Sequential feature_extractor{nullptr};
};
TORCH_MODULE(SsdBackbone);

class Ssd300Impl : public torch::nn::Module {
 public:
  // The channels of the six maps the heads read, and of the extra layers' 1x1 convolutions.
  explicit Ssd300Impl(bool tiny)
      : feature_extractor(register_module("feature_extractor", SsdBackbone(tiny))) {
    const std::vector<int64_t> channels = tiny
                                              ? std::vector<int64_t>{16, 16, 16, 8, 8, 8}
                                              : std::vector<int64_t>{1024, 512, 512, 256, 256, 256};
    const std::vector<int64_t> middle =
        tiny ? std::vector<int64_t>{8, 8, 8, 8, 8} : std::vector<int64_t>{256, 256, 128, 128, 128};
    for (size_t i = 0; i + 1 < channels.size(); ++i) {
      additional_blocks->push_back(extra_layer(channels[i], middle[i], channels[i + 1], i < 3));
    }
    for (size_t i = 0; i < channels.size(); ++i) {
      auto head = [&](int64_t per_box) {
        return layers::Conv2d(
            torch::nn::Conv2dOptions(channels[i], boxes_per_cell_[i] * per_box, 3).padding(1));
      };
      loc->push_back(head(4));
      conf->push_back(head(kClasses));
    }
    register_module("additional_blocks", additional_blocks);
    register_module("loc", loc);
    register_module("conf", conf);
    // The reference draws every weight of more than one dimension in these from Xavier's
    // uniform; the heads' biases keep the convolution's default.
    torch::NoGradGuard no_grad;
    for (auto* list : {&additional_blocks, &loc, &conf}) {
      for (auto& parameter : (*list)->parameters()) {
        if (parameter.dim() > 1) torch::nn::init::xavier_uniform_(parameter);
      }
    }
  }

  // Locations [N, 4, 8732] and class scores [N, 81, 8732].
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& images) {
    torch::Tensor x = feature_extractor(images);
    std::vector<torch::Tensor> locs, confs;
    for (size_t level = 0; level < loc->size(); ++level) {
      if (level > 0) x = additional_blocks[level - 1]->as<torch::nn::SequentialImpl>()->forward(x);
      const int64_t n = x.size(0);
      locs.push_back(loc[level]->as<layers::Conv2dImpl>()->forward(x).reshape({n, 4, -1}));
      confs.push_back(conf[level]->as<layers::Conv2dImpl>()->forward(x).reshape({n, kClasses, -1}));
    }
    return {torch::cat(locs, 2).contiguous(), torch::cat(confs, 2).contiguous()};
  }

  SsdBackbone feature_extractor;
  torch::nn::ModuleList additional_blocks, loc, conf;

 private:
  const std::vector<int64_t> boxes_per_cell_ = {4, 6, 6, 6, 4, 4};
};
TORCH_MODULE(Ssd300);

class Ssd300Model : public TrainableModel {
 public:
  Ssd300Model(bool tiny, int64_t objects_per_image)
      : net_(tiny),
        objects_per_image_(objects_per_image),
        defaults_xywh_(default_boxes_xywh()),
        defaults_ltrb_(xywh_to_ltrb(defaults_xywh_)),
        defaults_on_device_(defaults_xywh_) {}

  torch::nn::Module& module() override { return *net_; }

  // Images from N(0, 1); per image `objects_per_image` boxes (centres in [0.1, 0.9], sides in
  // [0.05, 0.5] of the image, clipped to it) with labels 1-80, matched to the default boxes.
  // inputs: the images; targets: the default boxes' labels [N, 8732]; extras[0]: their boxes
  // [N, 4, 8732] (cx, cy, w, h), as the reference's loader hands them to its loss.
  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                 bool channels_last) override {
    torch::Tensor images = torch::randn({batch_size, 3, kImageSize, kImageSize},
                                        torch::TensorOptions().device(device));
    if (channels_last) images = images.contiguous(torch::MemoryFormat::ChannelsLast);
    std::vector<torch::Tensor> labels, boxes;
    for (int64_t image = 0; image < batch_size; ++image) {
      const torch::Tensor centre = 0.1 + 0.8 * torch::rand({objects_per_image_, 2});
      const torch::Tensor size = 0.05 + 0.45 * torch::rand({objects_per_image_, 2});
      const torch::Tensor objects =
          torch::cat({centre - 0.5 * size, centre + 0.5 * size}, 1).clamp_(0, 1);
      const torch::Tensor classes = torch::randint(1, kClasses, {objects_per_image_});
      auto [matched_boxes, matched_labels] = match_objects(objects, classes, defaults_ltrb_);
      boxes.push_back(matched_boxes.t());
      labels.push_back(matched_labels);
    }
    return {images, torch::stack(labels).to(device), {torch::stack(boxes).to(device)}};
  }

  torch::Tensor training_loss(const SyntheticBatch& batch) override {
    auto [locations, scores] = net_->forward(batch.inputs);
    // On the device before the step is captured: a copy from the host inside it would wait.
    if (defaults_on_device_.device() != locations.device()) {
      defaults_on_device_ = defaults_xywh_.to(locations.device());
    }
    return ssd300::loss(locations.to(torch::kFloat), scores.to(torch::kFloat), batch.extras.at(0),
                        batch.targets, defaults_on_device_);
  }

  int64_t count_forward() override {
    net_->forward(torch::zeros({1, 3, kImageSize, kImageSize}));
    return 1;
  }

 private:
  Ssd300 net_{nullptr};
  int64_t objects_per_image_;
  torch::Tensor defaults_xywh_;
  torch::Tensor defaults_ltrb_;
  torch::Tensor defaults_on_device_;
};

// tiny: the hidden test model, test-tiny-ssd (the same boxes, matching and loss; a network of
// 16 and 8 channels whose step takes milliseconds on the CPU).
ModelInfo ssd300_info(bool tiny) {
  ModelInfo info;
  info.name = tiny ? "test-tiny-ssd" : "ssd300";
  info.hidden = tiny;
  info.family = "convnet";
  info.task = "object-detection";
  info.sample_unit = "images";
  info.input_shape = {3, kImageSize, kImageSize};
  // DeepLearningExamples' SSD default batch per GPU.
  info.default_batch_size = 32;
  info.default_objects_per_image = kCocoObjectsPerImage;
  info.min_training_batch = 2;
  info.min_training_batch_why =
      "batch norm in training needs two values a channel, and its last feature map is 1x1";
  info.reference = tiny ? "a test model: SSD300's default boxes, matching and loss on a network "
                          "of 16 and 8 channels"
                        : "NVIDIA DeepLearningExamples PyTorch/Detection/SSD SSD300 v1.1 "
                          "(ResNet-50 backbone, 81 classes, 8,732 default boxes)";
  info.prefers_channels_last = true;
  ModelCapabilities& can = info.capabilities;
  can.input = SyntheticInput::kDetectionImages;
  can.graph_training = true;
  can.weight_formats = {};
  info.create = [tiny](const ModelOptions& options) -> std::unique_ptr<TrainableModel> {
    return std::make_unique<Ssd300Model>(tiny, objects_per_image(options));
  };
  return info;
}

const ModelRegistration kSsd300{
    with_default_counts(ssd300_info(false), 22894902, 22894902, 40301812224)};
const ModelRegistration kTinySsd{ssd300_info(true)};

}  // namespace

// The reference's Loss.forward, with `con_neg[mask] = 0` as masked_fill_: the same values, and
// no host synchronisation in a captured step.
torch::Tensor loss(const torch::Tensor& locations, const torch::Tensor& scores,
                   const torch::Tensor& target_boxes, const torch::Tensor& target_labels,
                   const torch::Tensor& defaults_xywh) {
  const torch::Tensor defaults = defaults_xywh.t().unsqueeze(0);
  const torch::Tensor default_centre = defaults.narrow(1, 0, 2);
  const torch::Tensor default_size = defaults.narrow(1, 2, 2);
  const torch::Tensor target_offsets =
      torch::cat({(target_boxes.narrow(1, 0, 2) - default_centre) / default_size / kScaleXy,
                  (target_boxes.narrow(1, 2, 2) / default_size).log() / kScaleWh},
                 1);
  const torch::Tensor positive = target_labels > 0;
  const torch::Tensor positives = positive.sum(1);
  torch::Tensor box_loss =
      torch::smooth_l1_loss(locations, target_offsets, at::Reduction::None).sum(1);
  box_loss = (positive.to(torch::kFloat) * box_loss).sum(1);
  const torch::Tensor class_loss = torch::nn::functional::cross_entropy(
      scores, target_labels,
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  const torch::Tensor negative_loss = class_loss.clone().masked_fill_(positive, 0);
  const torch::Tensor order = std::get<1>(negative_loss.sort(1, /*descending=*/true));
  const torch::Tensor rank = std::get<1>(order.sort(1));
  const torch::Tensor negatives =
      (kNegativesPerPositive * positives).clamp_max(positive.size(1)).unsqueeze(-1);
  const torch::Tensor counted = positive.logical_or(rank < negatives);
  const torch::Tensor total = box_loss + (class_loss * counted.to(torch::kFloat)).sum(1);
  const torch::Tensor any_positive = (positives > 0).to(torch::kFloat);
  return (total * any_positive / positives.to(torch::kFloat).clamp_min(1e-6)).mean(0);
}

std::pair<torch::Tensor, torch::Tensor> detect(torch::nn::Module& ssd300,
                                               const torch::Tensor& images) {
  return dynamic_cast<Ssd300Impl&>(ssd300).forward(images);
}

}  // namespace models::ssd300
}  // namespace gpubench
