// fit's probes hold their weights and kept gradients in one buffer per dtype (docs/memory.md):
// what a forward and backward allocates depends on the tensors' shapes and layouts, never on
// their values or on which storage they live in, so a probe of Llama 3 8B's two blocks needs the
// memory of its largest tensor for them instead of all of them.
#pragma once

#include <optional>
#include <vector>

#include <torch/torch.h>

namespace gpubench {

// Points every parameter at a zeroed buffer shared by all of its dtype and device, keeping its
// sizes and strides; each stays its own tensor (its own version counter, autograd and autocast
// entries). What the parameters held before is released. With `floating_as`, the floating ones
// are held in that dtype (inference's cast, without a copy of each weight in it first).
void share_zeroed_parameters(const std::vector<torch::Tensor>& parameters,
                             std::optional<c10::ScalarType> floating_as = std::nullopt);

// Replaces every defined gradient of the parameters with one over a zeroed buffer shared the same
// way (apart from the parameters'): backward then accumulates into existing gradients, as a step
// with gradients kept does, without holding a copy of each.
void share_zeroed_gradients(const std::vector<torch::Tensor>& parameters);

}  // namespace gpubench
