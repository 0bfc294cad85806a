#include "kernels/fused_compositions.h"

#include <cmath>

#include "torch_support/compat.h"

namespace gpubench::kernels::composition {

at::Tensor rms_norm_composition(const at::Tensor& x, const at::Tensor& weight, double eps,
                                bool weight_before_rounding) {
  if (!weight_before_rounding) return weight * compat::rms_norm(x, eps);
  if (weight.scalar_type() == x.scalar_type()) return compat::rms_norm(x, eps, weight);
  return (weight * compat::rms_norm(x.to(at::kFloat), eps)).to(x.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> add_rms_norm_composition(const at::Tensor& x,
                                                            const at::Tensor& addend,
                                                            const at::Tensor& weight, double eps,
                                                            bool weight_before_rounding) {
  at::Tensor sum = x + addend;
  at::Tensor normed = rms_norm_composition(sum, weight, eps, weight_before_rounding);
  return {std::move(sum), std::move(normed)};
}

at::Tensor silu_mul_composition(const at::Tensor& gate, const at::Tensor& up) {
  return at::silu(gate) * up;
}

at::Tensor rotary_composition(const at::Tensor& x, const at::Tensor& cos,
                              const at::Tensor& signed_sin) {
  const auto halves = x.chunk(2, -1);
  return x * cos + at::cat({halves[1], halves[0]}, -1) * signed_sin;
}

at::Tensor to_cache_dtype(const at::Tensor& x, const at::Tensor& stored) {
  if (x.scalar_type() == stored.scalar_type()) return x;
  if (stored.element_size() == 1) return x.clamp(-448, 448).to(stored.scalar_type());
  return x.to(stored.scalar_type());
}

void write_cache_at_composition(const at::Tensor& stored, const at::Tensor& position,
                                const at::Tensor& x) {
  const at::Tensor value = to_cache_dtype(x, stored);
  if (stored.element_size() == 1) {
    stored.view(at::kByte).index_copy_(2, position, value.view(at::kByte));
  } else {
    stored.index_copy_(2, position, value);
  }
}

at::Tensor rotary_cache_write_composition(const at::Tensor& q, const at::Tensor& k,
                                          const at::Tensor& v, const at::Tensor& cos,
                                          const at::Tensor& signed_sin, at::Tensor& keys,
                                          at::Tensor& values, const at::Tensor& position) {
  const int64_t heads = q.size(1);
  const at::Tensor rotated = rotary_composition(at::cat({q, k}, 1), cos, signed_sin);
  write_cache_at_composition(keys, position, rotated.narrow(1, heads, k.size(1)));
  write_cache_at_composition(values, position, v);
  return rotated.narrow(1, 0, heads);
}

at::Tensor decode_attention_composition(const at::Tensor& q, const at::Tensor& keys,
                                        const at::Tensor& values, const at::Tensor& position,
                                        double scale, const c10::optional<at::Tensor>& sinks) {
  const int64_t batch = q.size(0), heads = q.size(1), kv_heads = keys.size(1);
  const int64_t head_dim = q.size(3), capacity = keys.size(2), group = heads / kv_heads;
  const at::Tensor grouped = q.reshape({batch, kv_heads, group, head_dim});
  const at::Tensor k = keys.to(q.scalar_type()), v = values.to(q.scalar_type());
  const at::Tensor hidden = at::arange(capacity, position.options()) > position;
  if (!sinks.has_value() || !sinks->defined()) {
    at::Tensor scores = at::matmul(grouped, k.transpose(-2, -1)) * scale;
    scores.masked_fill_(hidden, -INFINITY);
    return at::matmul(at::softmax(scores, -1), v).reshape({batch, heads, 1, head_dim});
  }
  at::Tensor scores = at::matmul(grouped, k.transpose(-2, -1)).to(at::kFloat).mul_(scale);
  scores.masked_fill_(hidden, -INFINITY);
  const at::Tensor sink = sinks->to(at::kFloat).reshape({1, kv_heads, group, 1});
  scores = at::softmax(at::cat({scores, sink.expand({batch, kv_heads, group, 1})}, -1), -1);
  return at::matmul(scores.narrow(-1, 0, capacity).to(v.scalar_type()), v)
      .reshape({batch, heads, 1, head_dim});
}

std::tuple<at::Tensor, at::Tensor> quantize_fp8_composition(const at::Tensor& x,
                                                            at::ScalarType format,
                                                            at::IntArrayRef along, double largest) {
  // 2^126: a power of two whose reciprocal, the scale handed to the product, is still a normal
  // float32 (a subnormal one could be flushed to zero on the GPU).
  constexpr double kLargestScale = 8.507059173023462e37;
  // The infinity norm: the largest magnitude in one reduction, in float32, with no |x| written.
  // (No dimensions, not an empty list of them, for the whole tensor.)
  const at::OptionalIntArrayRef dims =
      along.empty() ? at::OptionalIntArrayRef() : at::OptionalIntArrayRef(along);
  const at::Tensor amax = at::linalg_vector_norm(x, INFINITY, dims, !along.empty(), at::kFloat);
  at::Tensor scale = amax.clamp_min(largest / kLargestScale).reciprocal_().mul_(largest);
  if (!along.empty()) scale = at::exp2(at::floor(at::log2(scale)));
  // Since scale <= largest / amax, every |x * scale| is at most the format's largest value but
  // for the rounding of the scale to x's dtype, which the cast rounds back down to it (e4m3fn
  // turns only 480 and above into NaN, e5m2 only 61440 and above into infinity): no clamp.
  at::Tensor applied = scale;
  if (x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble) {
    applied = scale.to(x.scalar_type());
    scale = applied.to(at::kFloat);
  }
  return {(x * applied).to(format), scale.reciprocal()};
}

at::Tensor int8_weight_linear_composition(const at::Tensor& x, const at::Tensor& codes,
                                          const at::Tensor& scales) {
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = codes.size(0);
  return compat::int8_weight_mm(x.reshape({-1, x.size(-1)}).contiguous(), codes, scales)
      .reshape(shape);
}

at::Tensor fp8_weight_linear_composition(const at::Tensor& x, const at::Tensor& codes,
                                         const at::Tensor& scale) {
  const at::Tensor products = at::matmul(x.to(at::kFloat), codes.to(at::kFloat).t());
  return (products * scale.reshape({-1})).to(x.scalar_type());
}

}  // namespace gpubench::kernels::composition
