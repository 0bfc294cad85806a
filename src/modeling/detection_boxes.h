// The box arithmetic of torchvision's two-stage detectors (torchvision/models/detection/_utils.py
// and torchvision/ops/boxes.py), written the way torchvision writes it so that the same inputs
// and the same random state give the same boxes, matches and samples. Boxes are (x1, y1, x2, y2).
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace gpubench::detection {

// torchvision.ops.box_iou: [N, M].
torch::Tensor box_iou(const torch::Tensor& a, const torch::Tensor& b);
torch::Tensor box_area(const torch::Tensor& boxes);
// clip_boxes_to_image: x into [0, width], y into [0, height].
torch::Tensor clip_boxes_to_image(const torch::Tensor& boxes, int64_t height, int64_t width);
// remove_small_boxes: the indices of the boxes at least `min_size` wide and high.
torch::Tensor remove_small_boxes(const torch::Tensor& boxes, double min_size);
// batched_nms: NMS within each group (`groups`, one id a box), the kept indices by score
// descending; torchvision's two ways, chosen by its own size rule.
torch::Tensor batched_nms(const torch::Tensor& boxes, const torch::Tensor& scores,
                          const torch::Tensor& groups, double iou_threshold);

// BoxCoder: boxes as offsets from reference boxes, with per-coordinate weights.
class BoxCoder {
 public:
  explicit BoxCoder(std::array<double, 4> weights);
  // encode_single: the offsets of `boxes` [N, 4] from `references` [N, 4].
  torch::Tensor encode(const torch::Tensor& boxes, const torch::Tensor& references) const;
  // decode_single: `codes` [N, 4k] applied to `references` [N, 4]: [N, 4k].
  torch::Tensor decode(const torch::Tensor& codes, const torch::Tensor& references) const;

 private:
  std::array<double, 4> weights_;
  double clip_;  // log(1000 / 16): the largest log-size change decoded
};

// Matcher: each prediction's best ground-truth box, or kBelowLow / kBetween.
struct Matcher {
  static constexpr int64_t kBelowLow = -1;
  static constexpr int64_t kBetween = -2;
  double high, low;
  bool allow_low_quality_matches;
  // quality [ground truths, predictions] -> matches [predictions]
  torch::Tensor operator()(const torch::Tensor& quality) const;
};

// BalancedPositiveNegativeSampler: per image, up to `per_image` x `positive_fraction` positives
// (label >= 1) and negatives (label 0) to fill `per_image`, each by torch::randperm as
// torchvision draws them (positives then negatives, image by image). Masks of the sampled.
struct BalancedSampler {
  int64_t per_image;
  double positive_fraction;
  std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> operator()(
      const std::vector<torch::Tensor>& labels) const;
};

}  // namespace gpubench::detection
