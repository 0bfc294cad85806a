// The ATen compositions that gpubench's own operators replace (kernels/fused_operators.h): the
// operators' CPU forms, what runs where autograd records, and the CUDA kernels' fallback for the
// dtypes they do not take.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Optional.h>

#include <tuple>

namespace gpubench::kernels::composition {

at::Tensor rms_norm_composition(const at::Tensor& x, const at::Tensor& weight, double eps,
                                bool weight_before_rounding);
std::tuple<at::Tensor, at::Tensor> add_rms_norm_composition(const at::Tensor& x,
                                                            const at::Tensor& addend,
                                                            const at::Tensor& weight, double eps,
                                                            bool weight_before_rounding);
at::Tensor silu_mul_composition(const at::Tensor& gate, const at::Tensor& up);

// x cos + rotate_half(x) sin over x's last dimension, rotate_half's negation taken by the sine
// table (signed_sin: -sin on the first half): Hugging Face's apply_rotary_pos_emb.
at::Tensor rotary_composition(const at::Tensor& x, const at::Tensor& cos,
                              const at::Tensor& signed_sin);
// `x` in the dtype of `stored` (a key/value cache's tensor): an FP8 cache saturates it to
// e4m3's range, unscaled, since a cast past the range gives NaN.
at::Tensor to_cache_dtype(const at::Tensor& x, const at::Tensor& stored);
// `x` [batch, heads, 1, head_dim] written into `stored` [batch, heads, capacity, head_dim] at
// `position` (a device tensor [1]), in the cache's dtype (an FP8 cache clamped to e4m3's range
// and written as its bytes: index_copy has no Float8 kernel).
void write_cache_at_composition(const at::Tensor& stored, const at::Tensor& position,
                                const at::Tensor& x);
// q and k rotated as one tensor, k written into `keys` and v into `values` at `position`;
// returns the rotated q.
at::Tensor rotary_cache_write_composition(const at::Tensor& q, const at::Tensor& k,
                                          const at::Tensor& v, const at::Tensor& cos,
                                          const at::Tensor& signed_sin, at::Tensor& keys,
                                          at::Tensor& values, const at::Tensor& position);

// One new token's attention over a key/value cache: q [batch, heads, 1, head_dim] against keys
// and values [batch, kv_heads, capacity, head_dim], each group of heads / kv_heads query heads
// reading its shared head where it lies (no repeated copy), over the positions up to `position`
// (a device tensor [1]; the later ones masked to -inf). Scores are q k^T times `scale` in q's
// dtype, the softmax computed in float32 and rounded once to it (LibTorch's kernel: Hugging
// Face's softmax(dtype=float32).to(dtype) without its two casts). [batch, heads, 1, head_dim].
// With `sinks` (a logit per query head, gpt-oss's): each head's sink joins its softmax and is
// dropped after it, so a head may attend to nothing; the scores are then float32 from the
// product on, as gpt-oss's attention computes them (models/gpt_oss.cpp: attention_with_sinks),
// and the probabilities are rounded to the values' dtype before their product.
at::Tensor decode_attention_composition(const at::Tensor& q, const at::Tensor& keys,
                                        const at::Tensor& values, const at::Tensor& position,
                                        double scale, const c10::optional<at::Tensor>& sinks);

// `x` in the FP8 `format` with its largest magnitude mapped to the format's largest value
// (`largest`: 448 for e4m3, 57344 for e5m2), and the float32 scale that gives the values back
// (value ~ code * scale): one for the whole tensor (`along` empty), or one a slice along the one
// dimension `along` names, kept as 1 and rounded down to a power of two (torchao's rowwise
// recipe). The amax is clamped to at least largest / 2^126, so that an all-zero tensor's scale
// is finite and its codes zeros. The scale is rounded to x's dtype before the multiply, which
// runs in that dtype, so that the returned scale is the exact reciprocal of the one applied.
// x W^T for x [..., in] and W held as int8 codes [out, in] times a scale a row (in x's dtype):
// LibTorch's weight-only int8 matmul (_weight_int8pack_mm), its input flattened to rows.
at::Tensor int8_weight_linear_composition(const at::Tensor& x, const at::Tensor& codes,
                                          const at::Tensor& scales);

std::tuple<at::Tensor, at::Tensor> quantize_fp8_composition(const at::Tensor& x,
                                                            at::ScalarType format,
                                                            at::IntArrayRef along, double largest);

// x W^T for x [..., in] and W held as e4m3 codes [out, in] times `scale` (float32: [] for the
// whole weight, or one a row, [out] or [out, 1]), the input not quantised: every product and sum
// in float32, rounded once to x's dtype.
at::Tensor fp8_weight_linear_composition(const at::Tensor& x, const at::Tensor& codes,
                                         const at::Tensor& scale);

}  // namespace gpubench::kernels::composition
