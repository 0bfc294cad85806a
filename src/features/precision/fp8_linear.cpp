#include "features/precision/fp8_linear.h"

#include <atomic>
#include <cmath>

#include "common/errors.h"
#include "common/input_limits.h"
#include "kernels/fused_operators.h"
#include "torch_support/compat.h"

namespace gpubench::fp8 {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Atomic: CUDA's autograd runs backward on a thread of its own.
std::atomic<int64_t> frozen_quantizations{0}, trainable_quantizations{0};

std::atomic<int64_t> input_quantizations{0};

// The last input a training product quantised on this thread, and its operand: q, k and v (gate
// and up) read one input, which is then quantised once for the three. The entry holds the input,
// so that its storage cannot be freed and taken by another tensor at the same address while it
// stands; an in-place write to it changes its version.
struct QuantizedInput {
  Tensor input;
  int64_t version = -1;
  Recipe recipe = Recipe::kTensorwise;
  ScaledTensor operand;
};
thread_local QuantizedInput last_input;

bool same_input(const QuantizedInput& entry, const Tensor& input, Recipe recipe) {
  const Tensor& held = entry.input;
  return held.defined() && entry.recipe == recipe && held.data_ptr() == input.data_ptr() &&
         held.sizes() == input.sizes() && held.strides() == input.strides() &&
         held.scalar_type() == input.scalar_type() && held.device() == input.device() &&
         entry.version == static_cast<int64_t>(input._version());
}

ScaledTensor quantize_input(const Tensor& input, Recipe recipe) {
  if (input.is_inference()) return quantize_operand(input, recipe);  // it keeps no version
  if (same_input(last_input, input, recipe)) return last_input.operand;
  input_quantizations.fetch_add(1);
  last_input = {input, static_cast<int64_t>(input._version()), recipe,
                quantize_operand(input, recipe)};
  return last_input.operand;
}

ScaledTensor quantize_trainable(const Tensor& weight, torch::ScalarType format,
                                std::optional<int64_t> along) {
  trainable_quantizations.fetch_add(1);
  return quantize(weight, format, along);
}

// The same values with the matrix's dimensions swapped: [K, N] column-major from [N, K].
ScaledTensor transposed(const ScaledTensor& t) {
  return {t.data.t(), t.scale.dim() == 0 ? t.scale : t.scale.t()};
}

// a [M, K] @ b [K, N], laid out as scaled_mm takes them (a row-major, b column-major).
Tensor matmul(const ScaledTensor& a, const ScaledTensor& b, torch::ScalarType out,
              bool fast_accumulation) {
  return compat::scaled_mm(a.data.contiguous(), b.data.t().contiguous().t(), a.scale, b.scale, out,
                           fast_accumulation);
}

// torchao's choices: fast accumulation in the forward product only.
class ScaledLinearFunction : public torch::autograd::Function<ScaledLinearFunction> {
 public:
  static Tensor forward(AutogradContext* ctx, const Tensor& input, const Tensor& weight,
                        int64_t recipe_value, const FrozenWeightOperands* frozen) {
    const auto recipe = static_cast<Recipe>(recipe_value);
    const ScaledTensor x = quantize_input(input, recipe);
    if (!frozen) trainable_quantizations.fetch_add(1);
    const ScaledTensor w = frozen ? frozen->forward() : quantize_operand(weight, recipe);
    ctx->saved_data["recipe"] = recipe_value;
    ctx->saved_data["input_dtype"] = static_cast<int64_t>(input.scalar_type());
    ctx->saved_data["input_grad"] = input.requires_grad();
    ctx->saved_data["weight_grad"] = weight.requires_grad();
    ctx->saved_data["weight_dtype"] = static_cast<int64_t>(weight.scalar_type());
    ctx->saved_data["frozen"] = frozen != nullptr;
    // Tensorwise keeps the FP8 operands for backward (their scales hold for the transposes);
    // rowwise scales along other dimensions there, so it keeps the input in bf16, and the weight
    // as it is or, frozen, its column-scaled operand.
    if (recipe == Recipe::kTensorwise) {
      const ScaledTensor& w_in_backward = frozen ? frozen->input_gradient() : w;
      ctx->save_for_backward({x.data, x.scale, w_in_backward.data, w_in_backward.scale});
    } else if (frozen) {
      ctx->save_for_backward({input.to(torch::kBFloat16), frozen->input_gradient().data,
                              frozen->input_gradient().scale});
    } else {
      ctx->save_for_backward({input.to(torch::kBFloat16), weight});
    }
    return matmul(x, transposed(w), torch::kBFloat16, true);
  }

  // dL/dx [M, K] = g [M, N] @ W [N, K] and dL/dW [N, K] = g^T [N, M] @ x [M, K].
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const Tensor& grad = grad_outputs[0];
    const bool input_grad = ctx->saved_data["input_grad"].toBool();
    const bool weight_grad = ctx->saved_data["weight_grad"].toBool();
    const auto dtype_of = [&](const char* key) {
      return static_cast<torch::ScalarType>(ctx->saved_data[key].toInt());
    };
    Tensor grad_input, grad_weight;
    if (static_cast<Recipe>(ctx->saved_data["recipe"].toInt()) == Recipe::kTensorwise) {
      const ScaledTensor x{saved[0], saved[1]}, w{saved[2], saved[3]};
      const ScaledTensor g = quantize(grad, compat::float8_e5m2());
      if (input_grad) grad_input = matmul(g, w, torch::kBFloat16, false);
      if (weight_grad) grad_weight = matmul(transposed(g), x, torch::kFloat, false);
    } else {
      const auto e4m3 = compat::float8_e4m3();
      // Rowwise products come out in bf16 only (CUTLASS's kernels).
      if (input_grad) {
        const ScaledTensor w = ctx->saved_data["frozen"].toBool()
                                   ? ScaledTensor{saved[1], saved[2]}
                                   : quantize_trainable(saved[1], e4m3, 0);
        grad_input = matmul(quantize(grad, e4m3, 1), w, torch::kBFloat16, false);
      }
      if (weight_grad) {
        grad_weight = matmul(quantize(grad.t(), e4m3, 1), quantize(saved[0], e4m3, 0),
                             torch::kBFloat16, false);
      }
    }
    if (grad_input.defined()) grad_input = grad_input.to(dtype_of("input_dtype"));
    if (grad_weight.defined()) grad_weight = grad_weight.to(dtype_of("weight_dtype"));
    return {grad_input, grad_weight, Tensor(), Tensor()};
  }
};

}  // namespace

std::string recipe_name(Recipe recipe) {
  return recipe == Recipe::kRowwise ? "rowwise" : "tensorwise";
}

Recipe parse_recipe(const std::string& name) {
  if (name == "tensorwise") return Recipe::kTensorwise;
  if (name == "rowwise") return Recipe::kRowwise;
  throw UsageError("fp8_recipe must be one of tensorwise, rowwise, got '" + echoed(name) + "'");
}

double format_max(torch::ScalarType format) {
  return format == compat::float8_e5m2() ? 57344.0 : 448.0;
}

// One operator (kernels/fused_operators.h): on a GPU the quantisations, not the FP8 products,
// set FP8's speed, and the composition's ten launches are two kernels there.
ScaledTensor quantize(const Tensor& x, torch::ScalarType format, std::optional<int64_t> along) {
  std::vector<int64_t> dims;
  if (along) dims.push_back(*along);
  auto [data, scale] = kernels::quantize_fp8(x, format, dims, format_max(format));
  return {std::move(data), std::move(scale)};
}

bool aligned(int64_t rows, int64_t in_features, int64_t out_features, bool weight_gradient) {
  const auto multiple = [](int64_t n) { return n % 16 == 0; };
  return multiple(in_features) && multiple(out_features) && (!weight_gradient || multiple(rows));
}

void FrozenWeightOperands::refresh(const Tensor& weight, Recipe recipe) {
  const void* storage = weight.data_ptr();
  const int64_t version = static_cast<int64_t>(weight._version());
  if (storage == storage_ && version == version_ && recipe == recipe_) return;
  torch::NoGradGuard no_grad;
  forward_ = quantize_operand(weight, recipe);
  input_gradient_ =
      recipe == Recipe::kRowwise ? quantize(weight, compat::float8_e4m3(), 0) : forward_;
  input_gradient_.data = input_gradient_.data.t().contiguous().t();
  storage_ = storage;
  version_ = version;
  recipe_ = recipe;
  frozen_quantizations.fetch_add(1);
}

Tensor scaled_linear(const Tensor& input, const Tensor& weight, Recipe recipe,
                     FrozenWeightOperands* frozen) {
  const int64_t in_features = weight.size(1);
  const Tensor rows = input.reshape({-1, in_features});
  const bool use_frozen = frozen != nullptr && !weight.requires_grad();
  if (use_frozen) frozen->refresh(weight, recipe);
  const Tensor out = ScaledLinearFunction::apply(rows, weight, static_cast<int64_t>(recipe),
                                                 use_frozen ? frozen : nullptr);
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = weight.size(0);
  return out.view(shape);
}

ScaledTensor quantize_operand(const Tensor& x, Recipe recipe) {
  if (recipe == Recipe::kRowwise) return quantize(x, compat::float8_e4m3(), 1);
  return quantize(x, compat::float8_e4m3());
}

Tensor quantized_linear(const Tensor& input, const ScaledTensor& weight, Recipe recipe) {
  return quantized_linear(input, std::vector<ScaledTensor>{weight}, recipe);
}

Tensor quantized_linear(const Tensor& input, const std::vector<ScaledTensor>& weights,
                        Recipe recipe) {
  const int64_t in_features = weights.front().data.size(1);
  const ScaledTensor x = quantize_operand(input.reshape({-1, in_features}), recipe);
  std::vector<Tensor> outputs;
  for (const ScaledTensor& weight : weights) {
    outputs.push_back(matmul(x, transposed(weight), torch::kBFloat16, true));
  }
  const Tensor out = outputs.size() == 1 ? outputs.front() : torch::cat(outputs, -1);
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = out.size(-1);
  return out.view(shape);
}

WeightQuantizations weight_quantizations() {
  return {frozen_quantizations.load(), trainable_quantizations.load()};
}

int64_t training_input_quantizations() {
  return input_quantizations.load();
}

namespace {

struct FrozenOperandsState : layers::ProductState {
  FrozenWeightOperands operands;
};

class TrainingProducts : public layers::LinearProducts {
 public:
  explicit TrainingProducts(Recipe recipe) : recipe_(recipe) {}
  bool runs(int64_t rows, int64_t in_features, int64_t out_features,
            bool weight_gradient) const override {
    return aligned(rows, in_features, out_features, weight_gradient);
  }
  torch::Tensor linear(const torch::Tensor& input, const torch::Tensor& weight,
                       std::shared_ptr<layers::ProductState>& state) const override {
    auto* frozen = dynamic_cast<FrozenOperandsState*>(state.get());
    if (frozen == nullptr) {
      auto made = std::make_shared<FrozenOperandsState>();
      frozen = made.get();
      state = std::move(made);
    }
    return scaled_linear(input, weight, recipe_, &frozen->operands);
  }
  bool fp8_products() const override { return true; }

 private:
  Recipe recipe_;
};

}  // namespace

const layers::LinearProducts& training_products(Recipe recipe) {
  static const TrainingProducts tensorwise(Recipe::kTensorwise), rowwise(Recipe::kRowwise);
  return recipe == Recipe::kRowwise ? static_cast<const layers::LinearProducts&>(rowwise)
                                    : tensorwise;
}

TrainingScope::TrainingScope(std::optional<Recipe> recipe)
    : scope_(recipe ? &training_products(*recipe) : nullptr) {}

}  // namespace gpubench::fp8
