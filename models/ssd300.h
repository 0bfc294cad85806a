// SSD300 v1.1 (models/ssd300.cpp): what its tests reach beyond the registry's TrainableModel.
#pragma once

#include <utility>

#include <torch/torch.h>

namespace gpubench::models::ssd300 {

// The 8,732 default boxes (cx, cy, w, h) [8732, 4], as the reference's dboxes300_coco().
torch::Tensor default_boxes_xywh();
torch::Tensor xywh_to_ltrb(const torch::Tensor& xywh);
// The reference's Encoder.encode of one image's objects [K, 4] (l, t, r, b) and labels [K]: the
// default boxes' targets [8732, 4] (cx, cy, w, h) and labels [8732] (0: background).
std::pair<torch::Tensor, torch::Tensor> match_objects(const torch::Tensor& objects_ltrb,
                                                      const torch::Tensor& labels,
                                                      const torch::Tensor& defaults_ltrb);
// The network's forward on an ssd300's TrainableModel::module(): locations [N, 4, 8732] and
// class scores [N, 81, 8732].
std::pair<torch::Tensor, torch::Tensor> detect(torch::nn::Module& ssd300,
                                               const torch::Tensor& images);

// The training loss of locations and scores (float32) against the default boxes' targets
// [N, 4, 8732] and labels [N, 8732], with the default boxes on the same device: the
// reference's Loss.
torch::Tensor loss(const torch::Tensor& locations, const torch::Tensor& scores,
                   const torch::Tensor& target_boxes, const torch::Tensor& target_labels,
                   const torch::Tensor& defaults_xywh);

}  // namespace gpubench::models::ssd300
