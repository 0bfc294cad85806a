// FP8 linear layers (docs/fp8.md), with the recipe torchao's float8 training uses: each tensor
// scaled dynamically from its amax at every call, e4m3 for inputs and weights and e5m2 for
// gradients (tensorwise), or a scale per row and every operand e4m3 (rowwise); the forward
// matmul and both backward matmuls through scaled_mm (torch_support/compat.h), bf16 out.
#pragma once

#include <optional>
#include <string>

#include <torch/torch.h>

#include "modeling/linear_products.h"

namespace gpubench::fp8 {

enum class Recipe { kTensorwise, kRowwise };
Recipe parse_recipe(const std::string& name);  // "tensorwise" or "rowwise"
std::string recipe_name(Recipe recipe);

// An FP8 tensor and the float32 scale that gives its values back: value ~ data * scale.
struct ScaledTensor {
  torch::Tensor data;
  torch::Tensor scale;  // [] for the whole tensor, or the reduced dimension kept as 1
};

double format_max(torch::ScalarType format);  // 448 for e4m3, 57344 for e5m2

// `x` in `format` with its largest magnitude mapped to the format's largest value: the amax of
// the whole tensor, or along dimension `along` (one scale per row or column, rounded down to a
// power of two as torchao's rowwise recipe does). No value passes the format's range (a cast
// past it gives NaN). An all-zero tensor gets the largest scale, 2^126: its zeros stay zeros,
// and no scale is infinite or NaN. One own operator (kernels::quantize_fp8).
ScaledTensor quantize(const torch::Tensor& x, torch::ScalarType format,
                      std::optional<int64_t> along = std::nullopt);

// Whether a linear layer's product runs in FP8: scaled_mm on CUDA needs both sides of each
// operand to be multiples of 16, the rule applied on every device so that the CPU decides as the
// GPU does. The features always; the rows (tokens) too when the weight's gradient is computed,
// since they are the inner dimension of its product.
bool aligned(int64_t rows, int64_t in_features, int64_t out_features, bool weight_gradient);

// The FP8 operands of a weight that takes no gradient (LoRA's frozen base), quantised once and
// kept: the weight does not change, so casting it again at every step (tens of GB of memory
// traffic a step on Llama 3 8B) buys nothing. It costs two bytes per weight: the forward's
// operand and the input gradient's, laid out column-major once rather than transposed into a
// copy at every backward (rowwise: scaled along the other dimension too). Quantised again only
// when the weight's storage,
// its version (an in-place write) or the recipe changes.
class FrozenWeightOperands {
 public:
  void refresh(const torch::Tensor& weight, Recipe recipe);
  const ScaledTensor& forward() const { return forward_; }
  // The operand of the input gradient's product, dL/dx = g W: W [out, in] laid out column-major,
  // as scaled_mm takes its second operand, so that no step copies a transpose of it (rowwise:
  // scaled along its columns). Tensorwise: the forward operand's codes, transposed once.
  const ScaledTensor& input_gradient() const { return input_gradient_; }

 private:
  ScaledTensor forward_, input_gradient_;
  const void* storage_ = nullptr;
  int64_t version_ = -1;
  Recipe recipe_ = Recipe::kTensorwise;
};

// y = x W^T for x [..., in] and W [out, in]; the forward, input-gradient and weight-gradient
// matmuls in FP8 by `recipe`. bf16 out; the gradients in their tensors' own dtypes. A weight that
// takes no gradient has its operands from `frozen` when given (refreshed there first).
torch::Tensor scaled_linear(const torch::Tensor& input, const torch::Tensor& weight, Recipe recipe,
                            FrozenWeightOperands* frozen = nullptr);

// How often weights were cast to FP8 for training's products since the process started, frozen
// and trainable apart: a frozen weight once, a trainable one at every step.
struct WeightQuantizations {
  int64_t frozen = 0;
  int64_t trainable = 0;
};
WeightQuantizations weight_quantizations();
// How often training's products quantised their inputs since the process started: once for the
// products that read one input in turn (q, k and v; gate and up), not once each.
int64_t training_input_quantizations();

// A forward product's operand [rows, inner] (activations, or a weight [out, in]) in e4m3: one
// scale, or one per row (rowwise). Inference quantises its weights once with it.
ScaledTensor quantize_operand(const torch::Tensor& x, Recipe recipe);
// y = x W^T with the activations scaled dynamically, bf16 out.
torch::Tensor quantized_linear(const torch::Tensor& input, const ScaledTensor& weight,
                               Recipe recipe);
// The same for weights that share the input (a stack's parts), the input quantised once for all
// of them: their outputs side by side along the last dimension.
torch::Tensor quantized_linear(const torch::Tensor& input, const std::vector<ScaledTensor>& weights,
                               Recipe recipe);

// The counted linear layers' products in FP8 with a recipe (layers::LinearProducts): the aligned
// ones, through scaled_linear; a frozen weight's operands kept per layer.
const layers::LinearProducts& training_products(Recipe recipe);

// While alive on this thread, the counted linear layers (modeling/linear_compute.h) train their
// aligned products in FP8 with `recipe` (none: as they are), as autocast switches dtypes for the
// rest.
class TrainingScope {
 public:
  explicit TrainingScope(std::optional<Recipe> recipe);

 private:
  layers::LinearProductsScope scope_;
};

}  // namespace gpubench::fp8
