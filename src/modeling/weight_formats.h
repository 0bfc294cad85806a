// Weight formats inference holds linear weights in (FP8, int8, int4, MXFP4's experts): the
// interface the linear layers hold a weight through, and the table the formats register in from
// outside the models (src/features/: a format is applied to a built model, which names none).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace gpubench::layers {

// A linear weight held for inference in a format of its own: the product from it and what
// that product reads. A WeightFormat makes it.
class HeldWeight {
 public:
  virtual ~HeldWeight() = default;
  // x W^T for x [..., in]: [..., out] in x's dtype, without the bias.
  virtual torch::Tensor linear(const torch::Tensor& input) const = 0;
  // The bytes one product reads: the codes and their scales (and zeros).
  virtual int64_t bytes() const = 0;
  // Its products count as FP8 products (FlopCounter's FP8 share).
  virtual bool fp8_products() const { return false; }
  // The product plus the layer's bias: in the product's dtype.
  virtual torch::Tensor add_bias(const torch::Tensor& output, const torch::Tensor& bias) const {
    return output + bias.to(output.scalar_type());
  }
};

// How inference holds the linear layers' weights when not in the precision's dtype: applied to
// a built model from outside (the formats register below, from src/features/).
class WeightFormat {
 public:
  virtual ~WeightFormat() = default;
  // The `weights` setting's name for it ("int8", "fp8", ...).
  virtual std::string name() const = 0;
  // `weight` [out, in] held in this format, its parts registered on `layer` as buffers; null
  // where the format keeps a weight of this shape as it is (FP8 misaligned; MXFP4's linear
  // layers).
  virtual std::unique_ptr<HeldWeight> hold(torch::nn::Module& layer,
                                           const torch::Tensor& weight) const = 0;
  // The bytes `hold` would keep for a weight [out, in] (codes, scales and zeros, in its layout);
  // none where it would keep the weight as it is. Counted, for fit where this build lacks the
  // format's kernels; a test holds it to `hold`.
  virtual std::optional<int64_t> bytes_in(int64_t out_features, int64_t in_features) const = 0;
  // MXFP4: a mixture of experts' experts, not the linear layers (modeling/mixture_of_experts.h).
  virtual bool holds_experts_in_mxfp4() const { return false; }
  // Projections that share an input (modeling/shared_input_products.h) held as one: `stacked`
  // [sum of parts, in], the weights of `parts` rows each in order, held so that each part's
  // values are what holding it alone gives (a format with scales per row or per group of a row's
  // inputs holds the stack as it would one weight; FP8 tensorwise keeps a scale a part). Null
  // where the format cannot: each layer then holds its own weight.
  virtual std::unique_ptr<HeldWeight> hold_stack(torch::nn::Module& layer,
                                                 const torch::Tensor& stacked,
                                                 const std::vector<int64_t>& parts) const {
    (void)layer, (void)stacked, (void)parts;
    return nullptr;
  }
};

// What a format is made with, from the benchmark: each format reads the part it needs.
struct WeightFormatOptions {
  torch::ScalarType activations = torch::kBFloat16;  // the integer formats' scales
  int64_t group = 128;                               // int4's inputs per scale
  std::string fp8_recipe = "tensorwise";             // FP8's scaling: tensorwise or rowwise
};

struct WeightFormatInfo {
  std::string name;  // the `weights` setting's value
  // The linear layers' weights as integer codes, the products in bf16 (int8, int4): every model
  // that declares its linear weights' shapes (ModelCapabilities::linear_weight_shapes) holds it,
  // and resolve holds those shapes to the format's rules.
  bool integer_codes = false;
  std::function<std::shared_ptr<const WeightFormat>(const WeightFormatOptions&)> make;
};

class WeightFormatRegistry {
 public:
  static WeightFormatRegistry& instance();
  void add(WeightFormatInfo info);
  // Null for a name no format registered (a precision's: bf16, fp16).
  const WeightFormatInfo* find(const std::string& name) const;
  // The registered names whose entry satisfies `holds`, in name order.
  std::vector<std::string> names_where(
      const std::function<bool(const WeightFormatInfo&)>& holds) const;

 private:
  std::map<std::string, WeightFormatInfo> formats_;
};

// A format file registers itself with a static WeightFormatRegistration, as a model file does.
struct WeightFormatRegistration {
  explicit WeightFormatRegistration(WeightFormatInfo info) {
    WeightFormatRegistry::instance().add(std::move(info));
  }
};

// The registered format `name` made with `options`; null for a name none registered.
std::shared_ptr<const WeightFormat> make_weight_format(const std::string& name,
                                                       const WeightFormatOptions& options = {});
// Whether `weights` names a registered integer-code format (int8, int4).
bool is_integer_format(const std::string& weights);

}  // namespace gpubench::layers
