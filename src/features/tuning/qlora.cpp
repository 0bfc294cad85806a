#include "features/tuning/qlora.h"

#include <stdexcept>

#include "features/weights/nf4_weights.h"
#include "modeling/adapted_linear.h"
#include "modeling/weight_formats.h"

namespace gpubench::tuning {

int quantize_bases_nf4(torch::nn::Module& module) {
  const auto nf4_format = layers::make_weight_format("nf4");
  int quantized = 0;
  for (const auto& child : module.modules(/*include_self=*/false)) {
    auto* linear = dynamic_cast<layers::AdaptedLinearImpl*>(child.get());
    if (linear == nullptr || !linear->in_block()) continue;
    if (const std::string why = nf4::why_not(linear->weight.numel()); !why.empty()) {
      throw std::invalid_argument("the " + linear->role() +
                                  " projection cannot be held in NF4: " + why);
    }
    linear->hold_weight_in(*nf4_format);
    ++quantized;
  }
  return quantized;
}

}  // namespace gpubench::tuning
