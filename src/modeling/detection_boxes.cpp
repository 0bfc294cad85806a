#include "modeling/detection_boxes.h"

#include <cmath>

#include "torch_support/vision_ops.h"

namespace gpubench::detection {

using torch::indexing::Slice;

torch::Tensor box_area(const torch::Tensor& boxes) {
  return (boxes.select(1, 2) - boxes.select(1, 0)) * (boxes.select(1, 3) - boxes.select(1, 1));
}

torch::Tensor box_iou(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor area_a = box_area(a), area_b = box_area(b);
  const torch::Tensor lt = torch::maximum(a.index({Slice(), torch::indexing::None, Slice(0, 2)}),
                                          b.index({Slice(), Slice(0, 2)}));
  const torch::Tensor rb = torch::minimum(a.index({Slice(), torch::indexing::None, Slice(2, 4)}),
                                          b.index({Slice(), Slice(2, 4)}));
  const torch::Tensor wh = (rb - lt).clamp_min(0);
  const torch::Tensor inter = wh.select(2, 0) * wh.select(2, 1);
  return inter / (area_a.unsqueeze(1) + area_b - inter);
}

torch::Tensor clip_boxes_to_image(const torch::Tensor& boxes, int64_t height, int64_t width) {
  const int64_t dim = boxes.dim();
  const torch::Tensor x =
      boxes.index({torch::indexing::Ellipsis, Slice(0, torch::indexing::None, 2)})
          .clamp(0, static_cast<double>(width));
  const torch::Tensor y =
      boxes.index({torch::indexing::Ellipsis, Slice(1, torch::indexing::None, 2)})
          .clamp(0, static_cast<double>(height));
  return torch::stack({x, y}, dim).reshape(boxes.sizes());
}

torch::Tensor remove_small_boxes(const torch::Tensor& boxes, double min_size) {
  const torch::Tensor ws = boxes.select(1, 2) - boxes.select(1, 0);
  const torch::Tensor hs = boxes.select(1, 3) - boxes.select(1, 1);
  return torch::where((ws >= min_size).logical_and(hs >= min_size))[0];
}

torch::Tensor batched_nms(const torch::Tensor& boxes, const torch::Tensor& scores,
                          const torch::Tensor& groups, double iou_threshold) {
  // torchvision: the coordinate trick (one NMS over boxes offset by group) up to 4,000 box
  // coordinates on the CPU and 20,000 on a GPU, a loop over the groups beyond.
  const int64_t limit = boxes.device().is_cpu() ? 4000 : 20000;
  if (boxes.numel() > limit) {
    torch::Tensor keep_mask = torch::zeros_like(scores, torch::kBool);
    for (const torch::Tensor& group : std::get<0>(torch::_unique2(groups)).unbind()) {
      const torch::Tensor indices = torch::where(groups == group)[0];
      const torch::Tensor kept =
          vision_ops::nms(boxes.index({indices}), scores.index({indices}), iou_threshold);
      keep_mask.index_put_({indices.index({kept})}, true);
    }
    const torch::Tensor keep = torch::where(keep_mask)[0];
    return keep.index({std::get<1>(scores.index({keep}).sort(0, /*descending=*/true))});
  }
  if (boxes.numel() == 0) return torch::empty({0}, boxes.options().dtype(torch::kLong));
  const torch::Tensor max_coordinate = boxes.max();
  const torch::Tensor offsets = groups.to(boxes.scalar_type()) * (max_coordinate + 1);
  return vision_ops::nms(boxes + offsets.unsqueeze(1), scores, iou_threshold);
}

BoxCoder::BoxCoder(std::array<double, 4> weights)
    : weights_(weights), clip_(std::log(1000.0 / 16)) {}

torch::Tensor BoxCoder::encode(const torch::Tensor& boxes, const torch::Tensor& references) const {
  const auto column = [](const torch::Tensor& t, int64_t i) { return t.select(1, i).unsqueeze(1); };
  const torch::Tensor ex_widths = column(references, 2) - column(references, 0);
  const torch::Tensor ex_heights = column(references, 3) - column(references, 1);
  const torch::Tensor ex_ctr_x = column(references, 0) + 0.5 * ex_widths;
  const torch::Tensor ex_ctr_y = column(references, 1) + 0.5 * ex_heights;
  const torch::Tensor gt_widths = column(boxes, 2) - column(boxes, 0);
  const torch::Tensor gt_heights = column(boxes, 3) - column(boxes, 1);
  const torch::Tensor gt_ctr_x = column(boxes, 0) + 0.5 * gt_widths;
  const torch::Tensor gt_ctr_y = column(boxes, 1) + 0.5 * gt_heights;
  // torchvision multiplies by the weights as tensors of the boxes' dtype.
  const torch::Tensor w =
      torch::tensor(std::vector<double>(weights_.begin(), weights_.end()), boxes.options());
  return torch::cat(
      {w[0] * (gt_ctr_x - ex_ctr_x) / ex_widths, w[1] * (gt_ctr_y - ex_ctr_y) / ex_heights,
       w[2] * torch::log(gt_widths / ex_widths), w[3] * torch::log(gt_heights / ex_heights)},
      1);
}

torch::Tensor BoxCoder::decode(const torch::Tensor& codes, const torch::Tensor& references) const {
  const torch::Tensor boxes = references.to(codes.scalar_type());
  const torch::Tensor widths = boxes.select(1, 2) - boxes.select(1, 0);
  const torch::Tensor heights = boxes.select(1, 3) - boxes.select(1, 1);
  const torch::Tensor ctr_x = boxes.select(1, 0) + 0.5 * widths;
  const torch::Tensor ctr_y = boxes.select(1, 1) + 0.5 * heights;
  const auto every_fourth = [&](int64_t start) {
    return codes.index({Slice(), Slice(start, torch::indexing::None, 4)});
  };
  const torch::Tensor dx = every_fourth(0) / weights_[0];
  const torch::Tensor dy = every_fourth(1) / weights_[1];
  const torch::Tensor dw = (every_fourth(2) / weights_[2]).clamp_max(clip_);
  const torch::Tensor dh = (every_fourth(3) / weights_[3]).clamp_max(clip_);
  const torch::Tensor pred_ctr_x = dx * widths.unsqueeze(1) + ctr_x.unsqueeze(1);
  const torch::Tensor pred_ctr_y = dy * heights.unsqueeze(1) + ctr_y.unsqueeze(1);
  const torch::Tensor pred_w = torch::exp(dw) * widths.unsqueeze(1);
  const torch::Tensor pred_h = torch::exp(dh) * heights.unsqueeze(1);
  const torch::Tensor half = torch::tensor(0.5, pred_h.options());
  const torch::Tensor half_h = half * pred_h, half_w = half * pred_w;
  return torch::stack(
             {pred_ctr_x - half_w, pred_ctr_y - half_h, pred_ctr_x + half_w, pred_ctr_y + half_h},
             2)
      .flatten(1);
}

torch::Tensor Matcher::operator()(const torch::Tensor& quality) const {
  auto [matched_vals, matches] = quality.max(0);
  const torch::Tensor all_matches = allow_low_quality_matches ? matches.clone() : torch::Tensor();
  const torch::Tensor below = matched_vals < low;
  const torch::Tensor between = (matched_vals >= low).logical_and(matched_vals < high);
  matches.index_put_({below}, kBelowLow);
  matches.index_put_({between}, kBetween);
  if (allow_low_quality_matches) {
    const torch::Tensor highest = std::get<0>(quality.max(1));
    const torch::Tensor pairs = torch::where(quality == highest.unsqueeze(1))[1];
    matches.index_put_({pairs}, all_matches.index({pairs}));
  }
  return matches;
}

std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> BalancedSampler::operator()(
    const std::vector<torch::Tensor>& labels) const {
  std::vector<torch::Tensor> positive_masks, negative_masks;
  for (const torch::Tensor& image_labels : labels) {
    const torch::Tensor positive = torch::where(image_labels >= 1)[0];
    const torch::Tensor negative = torch::where(image_labels == 0)[0];
    const int64_t positives =
        std::min(positive.numel(), static_cast<int64_t>(per_image * positive_fraction));
    const int64_t negatives = std::min(negative.numel(), per_image - positives);
    const torch::Tensor first =
        torch::randperm(positive.numel(), positive.options()).slice(0, 0, positives);
    const torch::Tensor second =
        torch::randperm(negative.numel(), negative.options()).slice(0, 0, negatives);
    torch::Tensor positive_mask = torch::zeros_like(image_labels, torch::kUInt8);
    torch::Tensor negative_mask = torch::zeros_like(image_labels, torch::kUInt8);
    positive_mask.index_put_({positive.index({first})}, 1);
    negative_mask.index_put_({negative.index({second})}, 1);
    positive_masks.push_back(positive_mask);
    negative_masks.push_back(negative_mask);
  }
  return {positive_masks, negative_masks};
}

}  // namespace gpubench::detection
