// Projections that read one input (attention's q, k and v; SwiGLU's gate and up) computed as one
// product at inference, as the fastest engines run a decoder layer: their weights stacked into
// one [sum of outputs, in] tensor whose rows each layer's weight is a view of, held in a weight
// format as one where the format can hold each layer's values as apart (int8, int4, FP8), and
// the product's output split back into the layers' parts as views. Applied to a built model from
// outside (fuse_shared_input_products, by the layers' roles); used where a model takes the
// projections together (project_together). Where autograd records or a layer has an adapter,
// the layers compute apart, as before.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "modeling/adapted_linear.h"
#include "modeling/linear_compute.h"

namespace gpubench::layers {

class SharedInputProduct {
 public:
  // `layers` read one input; they are stacked in this order.
  explicit SharedInputProduct(const std::vector<AdaptedLinearImpl*>& layers);
  // Every layer's output for `input`, each a view of the one product's.
  std::vector<torch::Tensor> forward(const torch::Tensor& input);
  // The stacked weight held in `format` (WeightFormat::hold_stack), its parts registered on the
  // first layer; false where the format cannot hold the stack with each layer's values as held
  // apart, or keeps the shape as it is: the layers are then given their own weights back.
  bool hold_weight_in(const WeightFormat& format);
  bool quantized() const { return compute_.quantized(); }
  // Which of the layers `layer` is.
  size_t index_of(const AdaptedLinearImpl* layer) const;

 private:
  void dissolve();

  std::vector<AdaptedLinearImpl*> layers_;
  std::vector<int64_t> widths_;
  torch::Tensor weight_, bias_;
  LinearCompute compute_;
};

// Stacks the q, k and v projections, and the gate and up projections, that are children of one
// module (a decoder layer's attention, its MLP) and can run as one product: the same input
// width, dtype, device and tensor-parallel split, no adapter, a bias on all or none. Returns how
// many groups it stacked. Inference only: call it after the weights are in their final dtype and
// before they are held in a format.
int fuse_shared_input_products(torch::nn::Module& model);

// The layers' outputs for `input`: one product where fuse_shared_input_products stacked them
// (and nothing records gradients); each layer's own forward otherwise.
std::vector<torch::Tensor> project_together(const torch::Tensor& input,
                                            const std::vector<AdaptedLinear>& layers);

}  // namespace gpubench::layers
