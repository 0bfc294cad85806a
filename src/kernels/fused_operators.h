// gpubench's own operators (docs/kernels.md), registered with LibTorch in the "gpubench"
// namespace. Each replaces an ATen composition in a decode step: its CPU form is that composition
// (the same values, bit for bit, and the same operators a profile sees inside it), its CUDA form
// one kernel of the project's (kernels/cuda/) where the build compiled them. Where autograd would
// record the call, the composition runs instead: the kernels have no backward.
#pragma once

#include <torch/torch.h>

#include <utility>

namespace gpubench::kernels {

// Whether this build registered the CUDA kernels (a CUDA LibTorch, and nvcc to compile them).
bool has_cuda_kernels();

// Where RMSNorm's weight is applied: after the normalised values are rounded to x's dtype
// (LlamaRMSNorm: weight * normed.to(dtype)), or in float32 before that rounding (Olmo2RMSNorm,
// gpt-oss's).
enum class RmsWeight { kAfterRounding, kBeforeRounding };

// RMSNorm over the last dimension, normalised in float32.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                       RmsWeight order);

// A residual sum and its RMSNorm in one: {x + addend, rms_norm(x + addend)}, the sum rounded to
// x's dtype before it is normalised, as the two operators compute it.
std::pair<torch::Tensor, torch::Tensor> add_rms_norm(const torch::Tensor& x,
                                                     const torch::Tensor& addend,
                                                     const torch::Tensor& weight, double eps,
                                                     RmsWeight order);

// SwiGLU's elementwise half: silu(gate) * up, silu rounded to gate's dtype before the product.
torch::Tensor silu_mul(const torch::Tensor& gate, const torch::Tensor& up);

// A decode step's rotary embedding and cache write: q and k [batch, heads, 1, head_dim] rotated
// (x cos + rotate_half(x) sin, the tables [1, head_dim] in q's dtype with rotate_half's negation
// in `signed_sin`), the rotated k written into `keys` and v into `values` [batch, kv_heads,
// capacity, head_dim] at `position` (a device tensor [1]: a CUDA graph replays it at each
// position). Returns the rotated q.
torch::Tensor rotary_cache_write(const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v, const torch::Tensor& cos,
                                 const torch::Tensor& signed_sin, torch::Tensor& keys,
                                 torch::Tensor& values, const torch::Tensor& position);

// One new token's attention over a cache at the positions up to `position` (a device tensor
// [1]): q [batch, heads, 1, head_dim], keys and values [batch, kv_heads, capacity, head_dim] in
// q's dtype or FP8 (each group of query heads reads its key/value head in place); q k^T times
// `scale`, softmax, times v. [batch, heads, 1, head_dim] in q's dtype. The CUDA kernel reads the
// cache up to the position only, split along it (kernels/cuda/decode_attention.cu). `sinks`
// (defined: a logit per query head [heads], gpt-oss's) join each head's softmax and are dropped
// after it (composition::decode_attention_composition).
torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& keys,
                               const torch::Tensor& values, const torch::Tensor& position,
                               double scale, const torch::Tensor& sinks = {});
// The heads decode_attention's CUDA kernel takes: 64 or 128 wide, up to 16 query heads a
// key/value head (others run the composition on the GPU too).
inline bool decode_attention_kernel_takes(int64_t head_dim, int64_t group) {
  return (head_dim == 64 || head_dim == 128) && group >= 1 && group <= 16;
}
// Whether decode_attention on `device` converts a cache held in `cache` to q's dtype `compute`
// at every step, as the composition does, where they differ; the CUDA kernel reads an FP8 cache
// as it is stored (TextGenerator::decode_converts_cache of a model that decodes through it).
bool decode_attention_converts_cache(torch::Device device, torch::ScalarType cache,
                                     torch::ScalarType compute, int64_t head_dim, int64_t group);

// `x` in the FP8 `format` scaled by its amax, and the float32 scale that gives its values back:
// one scale for the whole tensor (`along` empty) or one a slice along the dimension `along`
// names, kept as 1 (a power of two: torchao's rowwise). The amax and the cast in one pass each:
// on CUDA, two kernels for a tensor (the blocks' amaxes, then the cast), one a row along the
// last dimension of a 2-D x, where the composition launches about ten.
std::pair<torch::Tensor, torch::Tensor> quantize_fp8(const torch::Tensor& x,
                                                     torch::ScalarType format,
                                                     std::vector<int64_t> along, double largest);

// x W^T for x [..., in] with W held as e4m3 codes [out, in] times a float32 `scale` ([] for the
// weight, or one a row), the input in its own dtype (FP8 weight-only): float32 products rounded
// once to x's dtype. A decode step's product: the CUDA kernel streams the codes for up to
// kMatrixVectorRows rows of x (more run the composition); a longer input is a prefill, which
// quantises its activations and runs FP8 GEMMs instead (features/precision/).
torch::Tensor fp8_weight_linear(const torch::Tensor& x, const torch::Tensor& codes,
                                const torch::Tensor& scale);
inline constexpr int64_t kMatrixVectorRows = 8;
// x W^T for x [..., in] with W held as int8 codes [out, in] times a scale a row in x's dtype
// (LibTorch's _weight_int8pack_mm, which reads each code with one warp an output on CUDA): the
// CUDA kernel streams the codes as the FP8 one does for up to kMatrixVectorRows rows.
torch::Tensor int8_weight_linear(const torch::Tensor& x, const torch::Tensor& codes,
                                 const torch::Tensor& scales);

// The operators as a profile records them ("gpubench::silu_mul"), and how many kernels each
// launches on CUDA.
struct OwnOperator {
  std::string name;
  int cuda_launches = 1;
};
const std::vector<OwnOperator>& own_operators();

}  // namespace gpubench::kernels
