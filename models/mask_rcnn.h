// Mask R-CNN ResNet-50-FPN (models/mask_rcnn.cpp): what its tests reach beyond the registry's
// TrainableModel.
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

namespace gpubench::models::mask_rcnn {

// One image's objects: boxes [K, 4] (x1, y1, x2, y2, pixels), labels [K] (1-90), masks [K, H, W]
// (uint8).
struct Targets {
  torch::Tensor boxes, labels, masks;
};

// torchvision's five training losses, in its order.
struct Losses {
  torch::Tensor classifier, box_reg, mask, objectness, rpn_box_reg;
  torch::Tensor total() const { return classifier + box_reg + mask + objectness + rpn_box_reg; }
};

// A network of torchvision's configuration (2,000 proposals, 256 and 512 sampled) for images of
// height x width, min_size and max_size set to them: the reference check builds it at a small size.
std::shared_ptr<torch::nn::Module> network(int64_t height, int64_t width);

// The training-mode forward of a maskrcnn's TrainableModel::module() on images [3, H, W] in
// [0, 1], as torchvision's MaskRCNN computes it (transform, backbone, RPN, RoI heads).
Losses training_losses(torch::nn::Module& maskrcnn, const std::vector<torch::Tensor>& images,
                       const std::vector<Targets>& targets);

}  // namespace gpubench::models::mask_rcnn
