// The weight format "mxfp4": a mixture of experts' experts in MXFP4 (modeling/mxfp4_weights.h),
// the linear layers left in the activations' dtype.
#include "modeling/weight_formats.h"

namespace gpubench::mxfp4 {
namespace {

class Mxfp4Format : public layers::WeightFormat {
 public:
  std::string name() const override { return "mxfp4"; }
  std::unique_ptr<layers::HeldWeight> hold(torch::nn::Module&,
                                           const torch::Tensor&) const override {
    return nullptr;
  }
  std::optional<int64_t> bytes_in(int64_t, int64_t) const override { return std::nullopt; }
  bool holds_experts_in_mxfp4() const override { return true; }
};

const layers::WeightFormatRegistration kMxfp4Format{
    {"mxfp4", /*integer_codes=*/false,
     [](const layers::WeightFormatOptions&) { return std::make_shared<const Mxfp4Format>(); }}};

}  // namespace
}  // namespace gpubench::mxfp4
