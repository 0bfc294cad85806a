// torchvision's operators (torchvision::nms, torchvision::roi_align, ...): its `_C` shared object
// registers them with LibTorch's dispatcher when loaded. gpubench loads it at run time from the
// torchvision installed beside the LibTorch it runs on, and calls the operators through the
// dispatcher (docs/models.md#torchvisions-operators):
// - a wheel's LibTorch (site-packages/torch/lib): site-packages/torchvision/_C.so, which links
//   libtorch_python.so and through it the interpreter's libpython3.X.so; those two are opened
//   first, with their symbols global;
// - Debian's LibTorch (/usr/lib/<arch>): python3-torchvision's _C, linked to libtorch_cpu only.
// GPUBENCH_TORCHVISION_LIBRARY names the file instead.
#pragma once

#include <string>

#include <torch/torch.h>

namespace gpubench::vision_ops {

// Where torchvision's operators come from, once loaded; throws Unavailable (one line naming what
// to install, requirement::kTorchvisionOps) where they cannot be loaded. `for_what` names the
// model or command that needs them.
const std::string& require(const std::string& for_what);

// torchvision.ops.nms: the indices of the boxes [N, 4] (x1, y1, x2, y2) kept, by score descending.
// Computed in float32 whatever the inputs' dtype, as torchvision's autocast kernels compute both.
torch::Tensor nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_threshold);

// torchvision.ops.roi_align: [K, C, pooled_height, pooled_width] from `input` [N, C, H, W] and
// `rois` [K, 5] (batch index, x1, y1, x2, y2); in the input's dtype.
torch::Tensor roi_align(const torch::Tensor& input, const torch::Tensor& rois, double spatial_scale,
                        int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                        bool aligned);

}  // namespace gpubench::vision_ops
