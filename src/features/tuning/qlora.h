// QLoRA (Dettmers et al. 2023; docs/fine-tuning.md#qlora): the frozen base of a LoRA model held
// in NF4 (features/weights/nf4_weights.h), applied to the built model from outside.
#pragma once

#include <torch/torch.h>

namespace gpubench::tuning {

// Every block projection's weight (an AdaptedLinear with a role) held in NF4, its float storage
// freed; the embeddings, norms and heads stay in their dtype, as Hugging Face's 4-bit loading
// leaves them (it keeps lm_head). Returns how many were. Throws std::invalid_argument for a
// projection that is not a whole number of NF4's blocks (resolve's shapes never are).
int quantize_bases_nf4(torch::nn::Module& module);

}  // namespace gpubench::tuning
