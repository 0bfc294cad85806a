// A rule that runs the counted linear layers' products another way while it is active on a
// thread, as autocast switches dtypes for the rest: precision fp8's training products
// (features/precision/fp8_linear.h) are one, applied from outside the layers and the models.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

namespace gpubench::layers {

// What a rule keeps per layer between products (FP8: a frozen weight's operands, cast once).
class ProductState {
 public:
  virtual ~ProductState() = default;
};

class LinearProducts {
 public:
  virtual ~LinearProducts() = default;
  // Whether it runs a product of these sizes; the others stay torch's linear.
  virtual bool runs(int64_t rows, int64_t in_features, int64_t out_features,
                    bool weight_gradient) const = 0;
  // y = x W^T for x [..., in] and W [out, in], without the bias; `state` is the layer's own
  // (null until the rule first sets it).
  virtual torch::Tensor linear(const torch::Tensor& input, const torch::Tensor& weight,
                               std::shared_ptr<ProductState>& state) const = 0;
  // Its products count as FP8 products (FlopCounter's FP8 share).
  virtual bool fp8_products() const { return false; }

  // The rule active on this thread, or null. Rules live as long as the process (each a static
  // object), so that activation checkpointing can record which one a block ran under and
  // restore it when backward recomputes the block.
  static const LinearProducts* active();
};

// While alive, `products` (null: none) is the active rule on this thread; the previous one after.
class LinearProductsScope {
 public:
  explicit LinearProductsScope(const LinearProducts* products);
  ~LinearProductsScope();
  LinearProductsScope(const LinearProductsScope&) = delete;
  LinearProductsScope& operator=(const LinearProductsScope&) = delete;

 private:
  const LinearProducts* previous_;
};

}  // namespace gpubench::layers
