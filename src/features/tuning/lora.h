// LoRA (Hu et al. 2021, as PEFT and torchtune build it; docs/fine-tuning.md), applied to a built
// model from outside it: every parameter frozen, then an adapter on each projection whose role
// --lora-targets names (layers::AdaptedLinearImpl's roles): y = x W^T + b + (alpha / r) x A^T B^T,
// A [r, in] drawn like a linear layer's weight (Kaiming-uniform), B [out, r] zero, so an adapted
// model computes exactly what the base model does until B moves. The adapters stay in autocast's
// dtype; their multiply-adds are reported to an active FlopCounter. Tuning's model transform
// (tuning_transform.h) applies it to every model built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace gpubench::tuning {

// "q,k,v,o" -> {"q", "k", "v", "o"}, in the order of `roles` ("v,q" -> {"q", "v"});
// "all-linear" -> every role of `roles`. Throws UsageError for an empty list, a repeated role or
// one the model does not have (naming the allowed ones).
std::vector<std::string> parse_lora_targets(const std::string& text,
                                            const std::vector<std::string>& roles,
                                            const std::string& model);

// Every parameter of `module` frozen, then lora_A and lora_B (float32, trainable, on the weight's
// device) on each AdaptedLinear whose role is in `targets`. Sharded, the factor on the unsplit
// side is whole on every rank (lora_A of a column-parallel layer, lora_B of a row-parallel one)
// and each rank computes part of its gradient: the part is summed over the group as it arrives.
// Returns how many projections got one.
int apply_lora(torch::nn::Module& module, const std::vector<std::string>& targets, int64_t rank,
               double alpha);

}  // namespace gpubench::tuning
