// Mask R-CNN ResNet-50-FPN as torchvision's maskrcnn_resnet50_fpn builds it for its training
// recipe (an ImageNet-initialised backbone: frozen batch norm, conv1 and layer1 frozen), 91
// classes, 44,401,393 parameters, trained as its MaskRCNN trains in training mode:
// - the transform: normalised, resized so that the short side is min_size (at most max_size the
//   long one), batched with padding to a multiple of 32;
// - the backbone: ResNet-50 with FrozenBatchNorm2d and a feature pyramid (256 channels, levels
//   P2-P5 and a max-pooled P6);
// - the RPN: 3 anchors a cell on each level (sizes 32-512, ratios 0.5, 1, 2), the 2,000 best per
//   level before NMS (IoU 0.7) and 2,000 an image after it; 256 anchors an image sampled for its
//   loss, half positive at most (IoU 0.7 / 0.3);
// - the RoI heads: the ground truth added to the proposals, 512 sampled an image, a quarter
//   positive at most (IoU 0.5); RoIAlign over P2-P5 by box size (7x7 for the box head, 14x14 for
//   the mask head); two 1024 fully connected layers; four 3x3 convolutions, a 2x2 transposed one
//   and 28x28 masks per class;
// - the five losses summed, as torchvision's detection reference sums them.
// NMS and RoIAlign are torchvision's own (torch_support/vision_ops.h). Module names are
// torchvision's (backbone.body.layer1.0.conv1, backbone.fpn.inner_blocks.0.0, rpn.head.conv.0.0,
// roi_heads.mask_head.0.0, ...), so that its state dict loads by name.
#include "models/mask_rcnn.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "modeling/detection_boxes.h"
#include "modeling/flop_counter.h"
#include "modeling/layers.h"
#include "modeling/model_registry.h"
#include "modeling/synthetic_objects.h"
#include "models/resnet.h"
#include "torch_support/vision_ops.h"

namespace gpubench::models::mask_rcnn {
namespace {

using torch::indexing::None;
using torch::indexing::Slice;
namespace F = torch::nn::functional;

constexpr int64_t kClasses = 91;  // COCO's 90 category ids and the background
constexpr int64_t kFpnChannels = 256;

// What a network is built and trained at: the image sizes, and how many proposals the RPN keeps
// and samples. torchvision's defaults, and the tiny test model's (fewer proposals: its step takes
// a fraction of a second on the CPU, where 512 sampled RoIs an image through the box head's
// 12,544 x 1,024 layer take seconds).
struct Config {
  int64_t height, width;      // of the synthetic images
  double min_size, max_size;  // the transform's
  int64_t rpn_pre_nms, rpn_post_nms, rpn_sampled, roi_sampled;
};
constexpr Config kCoco{800, 1333, 800, 1333, 2000, 2000, 256, 512};
constexpr Config kTiny{96, 128, 96, 128, 200, 100, 64, 64};

layers::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t padding) {
  return layers::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(padding));
}

// torchvision's ResNet-50 without its pool and classifier, the norm frozen.
class BodyImpl : public torch::nn::Module {
 public:
  BodyImpl()
      : conv1(register_module("conv1", resnet_conv(3, 64, 7, 2, 3))),
        bn1(register_module("bn1", FrozenBatchNorm2d(64))) {
    int64_t in_planes = 64;
    const std::vector<std::pair<int64_t, int64_t>> stages = {{64, 3}, {128, 4}, {256, 6}, {512, 3}};
    for (size_t i = 0; i < stages.size(); ++i) {
      stage.push_back(
          register_module("layer" + std::to_string(i + 1),
                          resnet_stage<FrozenBatchNorm2d>(in_planes, stages[i].first,
                                                          stages[i].second, i == 0 ? 1 : 2)));
    }
    initialize_resnet(*this);
    // trainable_backbone_layers 3: conv1 and layer1 do not train.
    for (auto& parameter : conv1->parameters()) parameter.requires_grad_(false);
    for (auto& parameter : stage[0]->parameters()) parameter.requires_grad_(false);
  }

  std::vector<torch::Tensor> forward(const torch::Tensor& images) {
    torch::Tensor x = torch::max_pool2d(bn1(conv1(images)).relu_(), 3, 2, 1);
    std::vector<torch::Tensor> features;
    for (auto& layer : stage) {
      x = layer->forward(x);
      features.push_back(x);
    }
    return features;
  }

  layers::Conv2d conv1;
  FrozenBatchNorm2d bn1;
  std::vector<ResNetStage> stage;
};
TORCH_MODULE(Body);

// torchvision's FeaturePyramidNetwork with LastLevelMaxPool.
class PyramidImpl : public torch::nn::Module {
 public:
  PyramidImpl() {
    for (const int64_t in : {256, 512, 1024, 2048}) {
      inner_blocks->push_back(torch::nn::Sequential(conv(in, kFpnChannels, 1, 0)));
      layer_blocks->push_back(torch::nn::Sequential(conv(kFpnChannels, kFpnChannels, 3, 1)));
    }
    register_module("inner_blocks", inner_blocks);
    register_module("layer_blocks", layer_blocks);
    torch::NoGradGuard no_grad;
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* c = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_uniform_(c->weight, 1);
        torch::nn::init::zeros_(c->bias);
      }
    }
  }

  std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& x) {
    const auto inner = [&](size_t i, const torch::Tensor& t) {
      return inner_blocks[i]->as<torch::nn::SequentialImpl>()->forward(t);
    };
    const auto layer = [&](size_t i, const torch::Tensor& t) {
      return layer_blocks[i]->as<torch::nn::SequentialImpl>()->forward(t);
    };
    const size_t last = x.size() - 1;
    torch::Tensor last_inner = inner(last, x[last]);
    std::vector<torch::Tensor> results(x.size());
    results[last] = layer(last, last_inner);
    for (size_t i = last; i-- > 0;) {
      const torch::Tensor lateral = inner(i, x[i]);
      const torch::Tensor top_down = F::interpolate(
          last_inner, F::InterpolateFuncOptions()
                          .size(std::vector<int64_t>{lateral.size(-2), lateral.size(-1)})
                          .mode(torch::kNearest));
      last_inner = lateral + top_down;
      results[i] = layer(i, last_inner);
    }
    results.push_back(torch::max_pool2d(results.back(), 1, 2, 0));
    return results;
  }

  torch::nn::ModuleList inner_blocks, layer_blocks;
};
TORCH_MODULE(Pyramid);

class BackboneImpl : public torch::nn::Module {
 public:
  BackboneImpl() : body(register_module("body", Body())), fpn(register_module("fpn", Pyramid())) {}
  std::vector<torch::Tensor> forward(const torch::Tensor& images) {
    return fpn->forward(body->forward(images));
  }
  Body body;
  Pyramid fpn;
};
TORCH_MODULE(Backbone);

// A convolution and its ReLU, as torchvision's Conv2dNormActivation without a norm (submodule 0
// the convolution).
torch::nn::Sequential conv_relu(int64_t in, int64_t out) {
  return torch::nn::Sequential(conv(in, out, 3, 1), torch::nn::ReLU(torch::nn::ReLUOptions(true)));
}

class RpnHeadImpl : public torch::nn::Module {
 public:
  explicit RpnHeadImpl(int64_t anchors)
      : cls_logits(register_module("cls_logits", conv(kFpnChannels, anchors, 1, 0))),
        bbox_pred(register_module("bbox_pred", conv(kFpnChannels, 4 * anchors, 1, 0))) {
    conv_->push_back(conv_relu(kFpnChannels, kFpnChannels));
    register_module("conv", conv_);
    torch::NoGradGuard no_grad;
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* c = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::normal_(c->weight, 0, 0.01);
        torch::nn::init::zeros_(c->bias);
      }
    }
  }

  // Per level: objectness [N, A, H, W] and deltas [N, 4A, H, W].
  std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> forward(
      const std::vector<torch::Tensor>& features) {
    std::vector<torch::Tensor> logits, deltas;
    for (const torch::Tensor& feature : features) {
      const torch::Tensor t = conv_[0]->as<torch::nn::SequentialImpl>()->forward(feature);
      logits.push_back(cls_logits(t));
      deltas.push_back(bbox_pred(t));
    }
    return {logits, deltas};
  }

  layers::Conv2d cls_logits, bbox_pred;

 private:
  torch::nn::ModuleList conv_;
};
TORCH_MODULE(RpnHead);

class RpnImpl : public torch::nn::Module {
 public:
  RpnImpl() : head(register_module("head", RpnHead(3))) {}
  RpnHead head;
};
TORCH_MODULE(Rpn);

class MaskPredictorImpl : public torch::nn::Module {
 public:
  MaskPredictorImpl()
      : conv5_mask(register_module(
            "conv5_mask",
            torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(256, 256, 2).stride(2)))),
        mask_fcn_logits(register_module("mask_fcn_logits", conv(256, kClasses, 1, 0))) {
    torch::NoGradGuard no_grad;
    torch::nn::init::kaiming_normal_(conv5_mask->weight, 0, torch::kFanOut, torch::kReLU);
    torch::nn::init::kaiming_normal_(mask_fcn_logits->weight, 0, torch::kFanOut, torch::kReLU);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    // The transposed convolution's multiply-adds: every input element times out channels x 2x2.
    FlopCounter::record_multiply_adds(x.numel() * 256 * 4, false);
    return mask_fcn_logits(conv5_mask(x).relu_());
  }

  torch::nn::ConvTranspose2d conv5_mask;
  layers::Conv2d mask_fcn_logits;
};
TORCH_MODULE(MaskPredictor);

class BoxPredictorImpl : public torch::nn::Module {
 public:
  BoxPredictorImpl()
      : cls_score(register_module("cls_score", layers::Linear(1024, kClasses))),
        bbox_pred(register_module("bbox_pred", layers::Linear(1024, 4 * kClasses))) {}
  layers::Linear cls_score, bbox_pred;
};
TORCH_MODULE(BoxPredictor);

class BoxHeadImpl : public torch::nn::Module {
 public:
  BoxHeadImpl()
      : fc6(register_module("fc6", layers::Linear(kFpnChannels * 7 * 7, 1024))),
        fc7(register_module("fc7", layers::Linear(1024, 1024))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::relu(fc7(torch::relu(fc6(x.flatten(1)))));
  }
  layers::Linear fc6, fc7;
};
TORCH_MODULE(BoxHead);

class RoiHeadsImpl : public torch::nn::Module {
 public:
  RoiHeadsImpl()
      : box_head(register_module("box_head", BoxHead())),
        box_predictor(register_module("box_predictor", BoxPredictor())),
        mask_predictor(register_module("mask_predictor", MaskPredictor())) {
    for (int i = 0; i < 4; ++i) mask_head->push_back(conv_relu(kFpnChannels, kFpnChannels));
    register_module("mask_head", mask_head);
    torch::NoGradGuard no_grad;
    for (auto& module : mask_head->modules(/*include_self=*/false)) {
      if (auto* c = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_normal_(c->weight, 0, torch::kFanOut, torch::kReLU);
        torch::nn::init::zeros_(c->bias);
      }
    }
  }

  torch::Tensor mask_features(torch::Tensor x) {
    for (auto& block : *mask_head) x = block->as<torch::nn::SequentialImpl>()->forward(x);
    return x;
  }

  BoxHead box_head;
  BoxPredictor box_predictor;
  torch::nn::ModuleList mask_head;
  MaskPredictor mask_predictor;
};
TORCH_MODULE(RoiHeads);

class MaskRcnnImpl : public torch::nn::Module {
 public:
  explicit MaskRcnnImpl(Config config)
      : config(config),
        backbone(register_module("backbone", Backbone())),
        rpn(register_module("rpn", Rpn())),
        roi_heads(register_module("roi_heads", RoiHeads())) {}

  Config config;
  Backbone backbone;
  Rpn rpn;
  RoiHeads roi_heads;
};
TORCH_MODULE(MaskRcnn);

// --- The transform (torchvision's GeneralizedRCNNTransform in training mode).

struct ImageBatch {
  torch::Tensor tensors;                           // [N, 3, H, W], padded
  std::vector<std::pair<int64_t, int64_t>> sizes;  // each image's (height, width) before padding
};

torch::Tensor normalize(const torch::Tensor& image) {
  const torch::Tensor mean = torch::tensor({0.485, 0.456, 0.406}, image.options());
  const torch::Tensor std = torch::tensor({0.229, 0.224, 0.225}, image.options());
  return (image - mean.reshape({3, 1, 1})) / std.reshape({3, 1, 1});
}

// Resizes one image and its objects so that its short side is min_size (its long one at most
// max_size), as torchvision's _resize_image_and_masks and resize_boxes compute it.
torch::Tensor resize(const torch::Tensor& image, Targets& target, const Config& config) {
  // torchvision draws min_size from its list of one with the generator (torch_choice): the draw
  // is made here too, so that the samplers after it draw what torchvision's do.
  torch::empty({1}).uniform_(0.0, 1.0);
  const int64_t h = image.size(-2), w = image.size(-1);
  const torch::Tensor shape = torch::tensor({h, w});
  const torch::Tensor short_side = shape.min().to(torch::kFloat);
  const torch::Tensor long_side = shape.max().to(torch::kFloat);
  const double scale =
      torch::min(config.min_size / short_side, config.max_size / long_side).item<double>();
  const auto options = F::InterpolateFuncOptions()
                           .scale_factor(std::vector<double>{scale, scale})
                           .recompute_scale_factor(true);
  const torch::Tensor resized = F::interpolate(
      image.unsqueeze(0),
      F::InterpolateFuncOptions(options).mode(torch::kBilinear).align_corners(false))[0];
  target.masks = F::interpolate(target.masks.unsqueeze(1).to(torch::kFloat),
                                F::InterpolateFuncOptions(options).mode(torch::kNearest))
                     .select(1, 0)
                     .to(torch::kUInt8);
  const auto ratio = [&](int64_t now, int64_t before) {
    return torch::tensor(static_cast<float>(now), target.boxes.options()) /
           torch::tensor(static_cast<float>(before), target.boxes.options());
  };
  const torch::Tensor ratio_h = ratio(resized.size(-2), h), ratio_w = ratio(resized.size(-1), w);
  const std::vector<torch::Tensor> c = target.boxes.unbind(1);
  target.boxes = torch::stack({c[0] * ratio_w, c[1] * ratio_h, c[2] * ratio_w, c[3] * ratio_h}, 1);
  return resized;
}

ImageBatch transform(const std::vector<torch::Tensor>& images, std::vector<Targets>& targets,
                     const Config& config) {
  std::vector<torch::Tensor> resized;
  ImageBatch batch;
  int64_t height = 0, width = 0;
  for (size_t i = 0; i < images.size(); ++i) {
    resized.push_back(resize(normalize(images[i]), targets[i], config));
    batch.sizes.emplace_back(resized.back().size(-2), resized.back().size(-1));
    height = std::max(height, resized.back().size(-2));
    width = std::max(width, resized.back().size(-1));
  }
  const auto padded = [](int64_t side) { return (side + 31) / 32 * 32; };
  batch.tensors = resized[0].new_full(
      {static_cast<int64_t>(resized.size()), 3, padded(height), padded(width)}, 0);
  for (size_t i = 0; i < resized.size(); ++i) {
    batch.tensors[static_cast<int64_t>(i)]
        .index({Slice(), Slice(0, resized[i].size(-2)), Slice(0, resized[i].size(-1))})
        .copy_(resized[i]);
  }
  return batch;
}

// --- The region proposal network (torchvision's RegionProposalNetwork in training mode).

constexpr double kRpnNmsIou = 0.7;

// AnchorGenerator: per level, sizes 32 x 2^level at ratios 0.5, 1, 2, on every cell; the same
// anchors for every image [anchors, 4].
torch::Tensor anchors_for(const torch::Tensor& images, const std::vector<torch::Tensor>& features) {
  std::vector<torch::Tensor> per_level;
  const torch::Tensor ratios = torch::tensor({0.5f, 1.0f, 2.0f}, features[0].options());
  for (size_t level = 0; level < features.size(); ++level) {
    const torch::Tensor scales =
        torch::tensor({static_cast<float>(32 << level)}, features[0].options());
    const torch::Tensor h_ratios = torch::sqrt(ratios), w_ratios = 1 / h_ratios;
    const torch::Tensor ws = (w_ratios.unsqueeze(1) * scales.unsqueeze(0)).view(-1);
    const torch::Tensor hs = (h_ratios.unsqueeze(1) * scales.unsqueeze(0)).view(-1);
    const torch::Tensor base = (torch::stack({-ws, -hs, ws, hs}, 1) / 2).round();
    const int64_t grid_h = features[level].size(-2), grid_w = features[level].size(-1);
    const auto long_options = features[0].options().dtype(torch::kLong);
    const torch::Tensor stride_h = torch::full({}, images.size(-2) / grid_h, long_options);
    const torch::Tensor stride_w = torch::full({}, images.size(-1) / grid_w, long_options);
    const auto int_options = features[0].options().dtype(torch::kInt);
    const torch::Tensor shifts_x = torch::arange(0, grid_w, int_options) * stride_w;
    const torch::Tensor shifts_y = torch::arange(0, grid_h, int_options) * stride_h;
    const std::vector<torch::Tensor> grid = torch::meshgrid({shifts_y, shifts_x}, "ij");
    const torch::Tensor x = grid[1].reshape(-1), y = grid[0].reshape(-1);
    const torch::Tensor shifts = torch::stack({x, y, x, y}, 1);
    per_level.push_back((shifts.view({-1, 1, 4}) + base.view({1, -1, 4})).reshape({-1, 4}));
  }
  return torch::cat(per_level);
}

// concat_box_prediction_layers: [N x anchors, 1] and [N x anchors, 4], anchors level by level,
// each level cell by cell.
std::pair<torch::Tensor, torch::Tensor> flatten_predictions(
    const std::vector<torch::Tensor>& logits, const std::vector<torch::Tensor>& deltas) {
  std::vector<torch::Tensor> flat_logits, flat_deltas;
  for (size_t i = 0; i < logits.size(); ++i) {
    const int64_t n = logits[i].size(0), h = logits[i].size(2), w = logits[i].size(3);
    const int64_t anchors = deltas[i].size(1) / 4, c = logits[i].size(1) / anchors;
    const auto flatten = [&](const torch::Tensor& t, int64_t channels) {
      return t.view({n, -1, channels, h, w}).permute({0, 3, 4, 1, 2}).reshape({n, -1, channels});
    };
    flat_logits.push_back(flatten(logits[i], c));
    flat_deltas.push_back(flatten(deltas[i], 4));
  }
  return {torch::cat(flat_logits, 1).flatten(0, -2), torch::cat(flat_deltas, 1).reshape({-1, 4})};
}

// filter_proposals: per image, the best 2,000 anchors of each level, clipped, the tiny ones
// dropped, NMS within each level, the best 2,000 kept.
std::vector<torch::Tensor> filter_proposals(const torch::Tensor& proposals,
                                            const torch::Tensor& objectness_logits,
                                            const ImageBatch& batch,
                                            const std::vector<int64_t>& per_level,
                                            const Config& config) {
  const int64_t n = proposals.size(0);
  torch::Tensor objectness = objectness_logits.detach().reshape({n, -1});
  std::vector<torch::Tensor> levels, top;
  int64_t offset = 0;
  const auto options = objectness.options().dtype(torch::kLong);
  for (size_t level = 0; level < per_level.size(); ++level) {
    levels.push_back(torch::full({per_level[level]}, static_cast<int64_t>(level), options));
    const torch::Tensor ob = objectness.narrow(1, offset, per_level[level]);
    top.push_back(std::get<1>(ob.topk(std::min(config.rpn_pre_nms, per_level[level]), 1)) + offset);
    offset += per_level[level];
  }
  const torch::Tensor top_n = torch::cat(top, 1);
  const torch::Tensor batch_index = torch::arange(n, options).unsqueeze(1);
  objectness = objectness.index({batch_index, top_n});
  const torch::Tensor level_of = torch::cat(levels)
                                     .reshape({1, -1})
                                     .expand_as(objectness_logits.reshape({n, -1}))
                                     .index({batch_index, top_n});
  const torch::Tensor candidates = proposals.index({batch_index, top_n});
  const torch::Tensor probabilities = torch::sigmoid(objectness);
  std::vector<torch::Tensor> kept;
  for (int64_t i = 0; i < n; ++i) {
    torch::Tensor boxes =
        detection::clip_boxes_to_image(candidates[i], batch.sizes[i].first, batch.sizes[i].second);
    torch::Tensor scores = probabilities[i], lvl = level_of[i];
    torch::Tensor keep = detection::remove_small_boxes(boxes, 1e-3);
    boxes = boxes.index({keep}), scores = scores.index({keep}), lvl = lvl.index({keep});
    keep = torch::where(scores >= 0.0)[0];
    boxes = boxes.index({keep}), scores = scores.index({keep}), lvl = lvl.index({keep});
    keep = detection::batched_nms(boxes, scores, lvl, kRpnNmsIou).slice(0, 0, config.rpn_post_nms);
    kept.push_back(boxes.index({keep}));
  }
  return kept;
}

// The RPN's proposals for each image, and its two losses.
std::vector<torch::Tensor> propose(RpnImpl& rpn, const ImageBatch& batch,
                                   const std::vector<torch::Tensor>& features,
                                   const std::vector<Targets>& targets, const Config& config,
                                   Losses& losses) {
  auto [logits, deltas] = rpn.head->forward(features);
  const torch::Tensor anchors = anchors_for(batch.tensors, features);
  const int64_t n = batch.tensors.size(0);
  std::vector<int64_t> per_level;
  for (const torch::Tensor& level : logits) per_level.push_back(level[0].numel());
  auto [objectness, box_deltas] = flatten_predictions(logits, deltas);
  const detection::BoxCoder coder({1, 1, 1, 1});
  const torch::Tensor all_anchors = anchors.repeat({n, 1});
  const torch::Tensor proposals =
      coder.decode(box_deltas.detach(), all_anchors).reshape({-1, 1, 4}).view({n, -1, 4});
  std::vector<torch::Tensor> kept =
      filter_proposals(proposals, objectness, batch, per_level, config);

  const detection::Matcher matcher{0.7, 0.3, true};
  std::vector<torch::Tensor> labels, matched_boxes;
  for (int64_t i = 0; i < n; ++i) {
    const torch::Tensor& gt = targets[i].boxes;
    const torch::Tensor matched = matcher(detection::box_iou(gt, anchors));
    matched_boxes.push_back(gt.index({matched.clamp_min(0)}));
    torch::Tensor image_labels = (matched >= 0).to(torch::kFloat);
    image_labels.index_put_({matched == detection::Matcher::kBelowLow}, 0.0);
    image_labels.index_put_({matched == detection::Matcher::kBetween}, -1.0);
    labels.push_back(image_labels);
  }
  const torch::Tensor regression_targets = coder.encode(torch::cat(matched_boxes), all_anchors);
  auto [positive_masks, negative_masks] =
      detection::BalancedSampler{config.rpn_sampled, 0.5}(labels);
  const torch::Tensor positive = torch::where(torch::cat(positive_masks))[0];
  const torch::Tensor negative = torch::where(torch::cat(negative_masks))[0];
  const torch::Tensor sampled = torch::cat({positive, negative});
  const torch::Tensor all_labels = torch::cat(labels);
  losses.rpn_box_reg =
      torch::smooth_l1_loss(box_deltas.index({positive}), regression_targets.index({positive}),
                            at::Reduction::Sum, 1.0 / 9) /
      sampled.numel();
  losses.objectness = torch::binary_cross_entropy_with_logits(objectness.flatten().index({sampled}),
                                                              all_labels.index({sampled}));
  return kept;
}

// --- The RoI heads (torchvision's RoIHeads in training mode, with its mask branch).

// MultiScaleRoIAlign over P2-P5: each box pooled from the level its size picks (LevelMapper:
// level 4 for a 224-pixel box, one up or down for each doubling), RoIAlign at 2 samples a bin.
torch::Tensor pool(const std::vector<torch::Tensor>& features,
                   const std::vector<torch::Tensor>& boxes, const ImageBatch& batch,
                   int64_t output) {
  int64_t max_h = 0;
  for (const auto& size : batch.sizes) max_h = std::max(max_h, size.first);
  std::vector<double> scales;
  for (size_t level = 0; level < 4; ++level) {
    const double approx =
        static_cast<double>(features[level].size(-2)) / static_cast<double>(max_h);
    scales.push_back(
        std::pow(2.0, torch::tensor(approx, torch::kFloat).log2().round().item<double>()));
  }
  const auto level_of_scale = [](double scale) {
    return static_cast<int64_t>(-torch::tensor(scale, torch::kFloat).log2().item<double>());
  };
  const int64_t k_min = level_of_scale(scales.front()), k_max = level_of_scale(scales.back());
  std::vector<torch::Tensor> ids, areas;
  for (size_t i = 0; i < boxes.size(); ++i) {
    ids.push_back(torch::full_like(boxes[i].narrow(1, 0, 1), static_cast<double>(i)));
    areas.push_back(detection::box_area(boxes[i]));
  }
  const torch::Tensor rois = torch::cat({torch::cat(ids), torch::cat(boxes)}, 1);
  const torch::Tensor side = torch::sqrt(torch::cat(areas));
  const torch::Tensor levels =
      (torch::floor(4 + torch::log2(side / 224) + torch::tensor(1e-6, side.options()))
           .clamp(static_cast<double>(k_min), static_cast<double>(k_max))
           .to(torch::kLong) -
       k_min)
          .to(torch::kLong);
  torch::Tensor result =
      torch::zeros({rois.size(0), features[0].size(1), output, output}, features[0].options());
  for (int64_t level = 0; level < 4; ++level) {
    const torch::Tensor in_level = torch::where(levels == level)[0];
    const torch::Tensor pooled = vision_ops::roi_align(features[level], rois.index({in_level}),
                                                       scales[level], output, output, 2, false);
    result.index_put_({in_level}, pooled.to(result.scalar_type()));
  }
  return result;
}

// The sampled proposals of one image: boxes, labels (0: background), and the ground truth each
// matched.
struct Sampled {
  std::vector<torch::Tensor> proposals, labels, matched;
};

Sampled sample_proposals(std::vector<torch::Tensor> proposals, const std::vector<Targets>& targets,
                         int64_t roi_sampled) {
  const detection::Matcher matcher{0.5, 0.5, false};
  Sampled sampled;
  for (size_t i = 0; i < proposals.size(); ++i) {
    proposals[i] = torch::cat({proposals[i], targets[i].boxes});
    const torch::Tensor matched = matcher(detection::box_iou(targets[i].boxes, proposals[i]));
    const torch::Tensor clamped = matched.clamp_min(0);
    torch::Tensor labels = targets[i].labels.index({clamped}).to(torch::kLong);
    labels.index_put_({matched == detection::Matcher::kBelowLow}, 0);
    labels.index_put_({matched == detection::Matcher::kBetween}, -1);
    sampled.labels.push_back(labels);
    sampled.matched.push_back(clamped);
  }
  auto [positive, negative] = detection::BalancedSampler{roi_sampled, 0.25}(sampled.labels);
  for (size_t i = 0; i < proposals.size(); ++i) {
    const torch::Tensor keep = torch::where(positive[i].bitwise_or(negative[i]))[0];
    sampled.proposals.push_back(proposals[i].index({keep}));
    sampled.labels[i] = sampled.labels[i].index({keep});
    sampled.matched[i] = sampled.matched[i].index({keep});
  }
  return sampled;
}

void box_losses(RoiHeadsImpl& heads, const std::vector<torch::Tensor>& features,
                const ImageBatch& batch, const Sampled& sampled,
                const std::vector<Targets>& targets, Losses& losses) {
  std::vector<torch::Tensor> matched_boxes;
  for (size_t i = 0; i < targets.size(); ++i) {
    matched_boxes.push_back(targets[i].boxes.index({sampled.matched[i]}));
  }
  const detection::BoxCoder coder({10, 10, 5, 5});
  const torch::Tensor regression_targets =
      coder.encode(torch::cat(matched_boxes), torch::cat(sampled.proposals));
  const torch::Tensor representation =
      heads.box_head->forward(pool(features, sampled.proposals, batch, 7));
  const torch::Tensor class_logits = heads.box_predictor->cls_score(representation);
  torch::Tensor box_regression = heads.box_predictor->bbox_pred(representation);
  const torch::Tensor labels = torch::cat(sampled.labels);
  losses.classifier = torch::nn::functional::cross_entropy(class_logits, labels);
  const torch::Tensor positive = torch::where(labels > 0)[0];
  box_regression = box_regression.reshape({class_logits.size(0), box_regression.size(-1) / 4, 4});
  losses.box_reg =
      torch::smooth_l1_loss(box_regression.index({positive, labels.index({positive})}),
                            regression_targets.index({positive}), at::Reduction::Sum, 1.0 / 9) /
      labels.numel();
}

void mask_loss(RoiHeadsImpl& heads, const std::vector<torch::Tensor>& features,
               const ImageBatch& batch, const Sampled& sampled, const std::vector<Targets>& targets,
               Losses& losses) {
  std::vector<torch::Tensor> boxes, matched;
  for (size_t i = 0; i < targets.size(); ++i) {
    const torch::Tensor positive = torch::where(sampled.labels[i] > 0)[0];
    boxes.push_back(sampled.proposals[i].index({positive}));
    matched.push_back(sampled.matched[i].index({positive}));
  }
  const torch::Tensor logits =
      heads.mask_predictor->forward(heads.mask_features(pool(features, boxes, batch, 14)));
  const int64_t side = logits.size(-1);
  std::vector<torch::Tensor> labels, mask_targets;
  for (size_t i = 0; i < targets.size(); ++i) {
    labels.push_back(targets[i].labels.index({matched[i]}));
    const torch::Tensor rois =
        torch::cat({matched[i].to(boxes[i].scalar_type()).unsqueeze(1), boxes[i]}, 1);
    const torch::Tensor masks = targets[i].masks.unsqueeze(1).to(rois.scalar_type());
    mask_targets.push_back(
        vision_ops::roi_align(masks, rois, 1.0, side, side, -1, false).select(1, 0));
  }
  const torch::Tensor all_labels = torch::cat(labels), all_targets = torch::cat(mask_targets);
  if (all_targets.numel() == 0) {
    losses.mask = logits.sum() * 0;
    return;
  }
  losses.mask = torch::binary_cross_entropy_with_logits(
      logits.index({torch::arange(all_labels.size(0), all_labels.options()), all_labels}),
      all_targets);
}

Losses forward_losses(MaskRcnnImpl& net, const std::vector<torch::Tensor>& images,
                      std::vector<Targets> targets) {
  const ImageBatch batch = transform(images, targets, net.config);
  for (const Targets& target : targets) {
    const torch::Tensor degenerate = target.boxes.narrow(1, 2, 2) <= target.boxes.narrow(1, 0, 2);
    TORCH_CHECK(!degenerate.any().item<bool>(), "a target box has no width or height");
  }
  const std::vector<torch::Tensor> features = net.backbone->forward(batch.tensors);
  Losses losses;
  std::vector<torch::Tensor> proposals =
      propose(*net.rpn, batch, features, targets, net.config, losses);
  const Sampled sampled = sample_proposals(std::move(proposals), targets, net.config.roi_sampled);
  box_losses(*net.roi_heads, features, batch, sampled, targets, losses);
  mask_loss(*net.roi_heads, features, batch, sampled, targets, losses);
  return losses;
}

// --- The benchmark's model.

class MaskRcnnModel : public TrainableModel {
 public:
  MaskRcnnModel(Config config, int64_t objects_per_image)
      : net_(config), objects_per_image_(objects_per_image) {}

  torch::nn::Module& module() override { return *net_; }

  // Images uniform in [0, 1] (what torchvision's transform expects) at the model's size; per
  // image `objects_per_image` boxes (centres anywhere in the image, sides 5 % to 50 % of it),
  // labels 1-90, and each box's mask: the box's pixels. inputs: the images; targets: the labels
  // [N, K]; extras: the boxes [N, K, 4] and the masks [N, K, H, W] (uint8).
  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                 bool channels_last) override {
    const Config& sizes = net_->config;
    torch::Tensor images = torch::rand({batch_size, 3, sizes.height, sizes.width},
                                       torch::TensorOptions().device(device));
    if (channels_last) images = images.contiguous(torch::MemoryFormat::ChannelsLast);
    const int64_t k = objects_per_image_;
    const torch::Tensor extent =
        torch::tensor({static_cast<float>(sizes.width), static_cast<float>(sizes.height)});
    const torch::Tensor centre = torch::rand({batch_size, k, 2}) * extent;
    const torch::Tensor half = (0.05 + 0.45 * torch::rand({batch_size, k, 2})) * extent / 2;
    const torch::Tensor low = (centre - half).clamp_min(0).floor();
    const torch::Tensor high = torch::minimum(centre + half, extent).ceil();
    const torch::Tensor boxes = torch::cat({low, high}, 2);
    const torch::Tensor labels = torch::randint(1, kClasses, {batch_size, k});
    const torch::Tensor ys = torch::arange(sizes.height).view({1, 1, -1, 1});
    const torch::Tensor xs = torch::arange(sizes.width).view({1, 1, 1, -1});
    const auto corner = [&](int64_t c) { return boxes.select(2, c).view({batch_size, k, 1, 1}); };
    const torch::Tensor masks = (xs >= corner(0))
                                    .logical_and(xs < corner(2))
                                    .logical_and(ys >= corner(1))
                                    .logical_and(ys < corner(3))
                                    .to(torch::kUInt8);
    return {images, labels.to(device), {boxes.to(device), masks.to(device)}};
  }

  torch::Tensor training_loss(const SyntheticBatch& batch) override {
    const std::vector<torch::Tensor> images = batch.inputs.unbind(0);
    std::vector<Targets> targets;
    for (int64_t i = 0; i < batch.inputs.size(0); ++i) {
      targets.push_back({batch.extras.at(0)[i], batch.targets[i], batch.extras.at(1)[i]});
    }
    return forward_losses(*net_, images, std::move(targets)).total().to(torch::kFloat);
  }

  // One image's training-mode forward with its objects: what a training step computes.
  // The generator's state is kept: counting draws objects and samples proposals.
  int64_t count_forward() override {
    auto generator = at::detail::getDefaultCPUGenerator();
    const torch::Tensor state = generator.get_state();
    const SyntheticBatch batch = synthetic_batch(1, torch::kCPU, false);
    net_->train();
    training_loss(batch);
    net_->eval();
    generator.set_state(state);
    return 1;
  }

 private:
  MaskRcnn net_;
  int64_t objects_per_image_;
};

// tiny: the hidden test model, test-tiny-maskrcnn: the same network on 96x128 images, with fewer
// proposals.
ModelInfo maskrcnn_info(bool tiny) {
  const Config config = tiny ? kTiny : kCoco;
  ModelInfo info;
  info.name = tiny ? "test-tiny-maskrcnn" : "maskrcnn";
  info.hidden = tiny;
  info.aliases =
      tiny ? std::vector<std::string>{} : std::vector<std::string>{"maskrcnn_resnet50_fpn"};
  info.family = "convnet";
  info.task = "instance-segmentation";
  info.sample_unit = "images";
  info.input_shape = {3, config.height, config.width};
  // torchvision's detection reference trains 2 images a GPU.
  info.default_batch_size = 2;
  info.default_objects_per_image = kCocoObjectsPerImage;
  info.reference = tiny ? "a test model: Mask R-CNN ResNet-50-FPN on 96x128 images, 100 proposals "
                          "an image, 64 sampled"
                        : "torchvision maskrcnn_resnet50_fpn (frozen batch norm, conv1 and layer1 "
                          "frozen, as its ImageNet-initialised recipe), 91 classes";
  ModelCapabilities& can = info.capabilities;
  can.input = SyntheticInput::kDetectionImages;
  can.weight_formats = {};
  can.graph_refusal =
      "its proposals are chosen by the data (NMS, sampling), so their number and the tensors' "
      "shapes change from step to step";
  can.needs_vision_ops = true;
  info.create = [config](const ModelOptions& options) -> std::unique_ptr<TrainableModel> {
    return std::make_unique<MaskRcnnModel>(config, objects_per_image(options));
  };
  return info;
}

const ModelRegistration kMaskRcnn{
    with_default_counts(maskrcnn_info(false), 44401393, 44178993, 425407912448, 33683865600)};
const ModelRegistration kTinyMaskRcnn{maskrcnn_info(true)};

}  // namespace

std::shared_ptr<torch::nn::Module> network(int64_t height, int64_t width) {
  Config config = kCoco;
  config.height = height;
  config.width = width;
  config.min_size = static_cast<double>(std::min(height, width));
  config.max_size = static_cast<double>(std::max(height, width));
  return std::make_shared<MaskRcnnImpl>(config);
}

Losses training_losses(torch::nn::Module& maskrcnn, const std::vector<torch::Tensor>& images,
                       const std::vector<Targets>& targets) {
  return forward_losses(dynamic_cast<MaskRcnnImpl&>(maskrcnn), images, targets);
}

}  // namespace gpubench::models::mask_rcnn
