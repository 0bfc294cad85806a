// The CUDA forms of gpubench's own operators (kernels/fused_operators.h). Each computes what its
// composition computes, rounding where the composition's operators round: float32 arithmetic on
// values read in the tensors' dtype, each intermediate that the composition stores rounded to
// that dtype before it is used again. Reductions sum in another order than ATen's, so RMSNorm's
// values agree to float32 rounding of the sum, not bit for bit (the GPU check compares them).
#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/macros/Macros.h>
#include <torch/library.h>

#include "kernels/cuda/decode_attention.h"
#include "kernels/cuda/quantize_fp8.h"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/weight_only_linear.h"
#include "kernels/fused_compositions.h"

namespace gpubench::kernels {
namespace {

// One block a row of `width`. With `addend`, the row is first x + addend rounded to T, written to
// `sum` and normalised; the weight (T, or float32 where `Weight` is float) multiplies after the
// normalised value is rounded to T, or before.
template <typename T, typename Weight>
__global__ void rms_norm_rows(const T* __restrict__ x, const T* __restrict__ addend,
                              const Weight* __restrict__ weight, T* __restrict__ sum,
                              T* __restrict__ out, int64_t width, float eps,
                              bool weight_before_rounding) {
  const int64_t row = blockIdx.x;
  const T* x_row = x + row * width;
  const T* source = x_row;
  float squares = 0.0f;
  if (addend != nullptr) {
    const T* addend_row = addend + row * width;
    T* sum_row = sum + row * width;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
      const T s = static_cast<T>(static_cast<float>(x_row[i]) + static_cast<float>(addend_row[i]));
      sum_row[i] = s;
      squares += static_cast<float>(s) * static_cast<float>(s);
    }
    source = sum_row;
  } else {
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
      const float v = static_cast<float>(x_row[i]);
      squares += v * v;
    }
  }
  const float inverse_rms =
      rsqrtf(block_reduce(squares, Sum{}, 0.0f) / static_cast<float>(width) + eps);
  T* out_row = out + row * width;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float normed = static_cast<float>(source[i]) * inverse_rms;
    const float w = static_cast<float>(weight[i]);
    out_row[i] = weight_before_rounding
                     ? static_cast<T>(normed * w)
                     : static_cast<T>(w * static_cast<float>(static_cast<T>(normed)));
  }
}

// Rows of `width` elements, each `gate_stride` (`up_stride`) apart: gate and up may be the two
// halves of one stacked product's output (modeling/shared_input_products.h), read in place.
template <typename T>
__global__ void silu_mul_elements(const T* __restrict__ gate, const T* __restrict__ up,
                                  T* __restrict__ out, int64_t count, int64_t width,
                                  int64_t gate_stride, int64_t up_stride) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / width, column = i % width;
    const float g = static_cast<float>(gate[row * gate_stride + column]);
    const T silu = static_cast<T>(g / (1.0f + expf(-g)));
    out[i] =
        static_cast<T>(static_cast<float>(silu) * static_cast<float>(up[row * up_stride + column]));
  }
}

// One block a (sequence, head) of q and of k: the head rotated (x cos + x' signed_sin, x' the
// other half's element), each product rounded to T before the sum, as the composition's three
// operators round; q's into `q_out`, k's into `keys` at the position, and the same block copies
// v's head into `values`. `position` is read on the device, so a graph replays it.
template <typename T>
__global__ void rotary_cache_write_heads(const T* __restrict__ q, const T* __restrict__ k,
                                         const T* __restrict__ v, int64_t q_batch_stride,
                                         int64_t q_head_stride, int64_t k_batch_stride,
                                         int64_t k_head_stride, int64_t v_batch_stride,
                                         int64_t v_head_stride, const T* __restrict__ cos,
                                         const T* __restrict__ signed_sin, T* __restrict__ keys,
                                         T* __restrict__ values, const int64_t* position,
                                         T* __restrict__ q_out, int heads, int kv_heads,
                                         int head_dim, int64_t capacity) {
  const int batch = blockIdx.y, head = blockIdx.x;
  CUDA_KERNEL_ASSERT(*position >= 0 && *position < capacity);
  const bool is_q = head < heads;
  const int kv_head = head - heads;
  const T* x = is_q ? q + batch * q_batch_stride + head * q_head_stride
                    : k + batch * k_batch_stride + kv_head * k_head_stride;
  const int64_t slot =
      ((static_cast<int64_t>(batch) * kv_heads + kv_head) * capacity + *position) * head_dim;
  T* out = is_q ? q_out + (static_cast<int64_t>(batch) * heads + head) * head_dim : keys + slot;
  const int half = head_dim / 2;
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    const int other = d < half ? d + half : d - half;
    const T straight = static_cast<T>(static_cast<float>(x[d]) * static_cast<float>(cos[d]));
    const T turned =
        static_cast<T>(static_cast<float>(x[other]) * static_cast<float>(signed_sin[d]));
    out[d] = static_cast<T>(static_cast<float>(straight) + static_cast<float>(turned));
    if (!is_q) values[slot + d] = v[batch * v_batch_stride + kv_head * v_head_stride + d];
  }
}

int threads_for_row(int64_t width) {
  return width >= 4096 ? 1024 : 256;
}

// The kernels take contiguous rows of one floating dtype, the weight in it or (applied before
// the rounding) in float32; anything else runs the composition.
bool kernel_takes(const at::Tensor& x, const at::Tensor* addend, const at::Tensor& weight,
                  bool weight_before_rounding) {
  const auto dtype = x.scalar_type();
  const bool floating = dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
  const bool weight_ok = weight.scalar_type() == dtype ||
                         (weight_before_rounding && weight.scalar_type() == at::kFloat);
  const bool same_rows =
      addend == nullptr || (addend->sizes() == x.sizes() && addend->scalar_type() == dtype &&
                            addend->device() == x.device());
  return floating && weight_ok && same_rows && x.numel() > 0 && weight.dim() == 1 &&
         weight.size(0) == x.size(-1) && weight.device() == x.device();
}

void launch_rms_norm(const at::Tensor& x, const at::Tensor* addend, const at::Tensor& weight,
                     at::Tensor* sum, at::Tensor& out, double eps, bool weight_before_rounding) {
  const int64_t width = x.size(-1), rows = x.numel() / width;
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_rows", [&] {
    const scalar_t* addend_data = addend ? addend->data_ptr<scalar_t>() : nullptr;
    scalar_t* sum_data = sum ? sum->data_ptr<scalar_t>() : nullptr;
    const auto launch = [&](const auto* weight_data) {
      rms_norm_rows<<<rows, threads_for_row(width), 0, stream>>>(
          x.data_ptr<scalar_t>(), addend_data, weight_data, sum_data, out.data_ptr<scalar_t>(),
          width, static_cast<float>(eps), weight_before_rounding);
    };
    if (weight.scalar_type() == at::kFloat) {
      launch(weight.data_ptr<float>());
    } else {
      launch(weight.data_ptr<scalar_t>());
    }
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor rms_norm_cuda(const at::Tensor& x, const at::Tensor& weight, double eps,
                         bool weight_before_rounding) {
  if (!kernel_takes(x, nullptr, weight, weight_before_rounding)) {
    return composition::rms_norm_composition(x, weight, eps, weight_before_rounding);
  }
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor rows = x.contiguous(), w = weight.contiguous();
  at::Tensor out = at::empty_like(rows);
  launch_rms_norm(rows, nullptr, w, nullptr, out, eps, weight_before_rounding);
  return out;
}

std::tuple<at::Tensor, at::Tensor> add_rms_norm_cuda(const at::Tensor& x, const at::Tensor& addend,
                                                     const at::Tensor& weight, double eps,
                                                     bool weight_before_rounding) {
  if (!kernel_takes(x, &addend, weight, weight_before_rounding)) {
    return composition::add_rms_norm_composition(x, addend, weight, eps, weight_before_rounding);
  }
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor rows = x.contiguous(), added = addend.contiguous(), w = weight.contiguous();
  at::Tensor sum = at::empty_like(rows), out = at::empty_like(rows);
  launch_rms_norm(rows, &added, w, &sum, out, eps, weight_before_rounding);
  return {sum, out};
}

// `t` as [rows, last dimension] without a copy where its rows lie at one stride with unit
// stride along them (a contiguous tensor, or a slice of one along the last dimension, such as
// one half of a stacked product's output); a contiguous copy otherwise. Dimensions of size 1,
// whose strides mean nothing, are passed over.
at::Tensor as_rows(const at::Tensor& t) {
  const int64_t width = t.size(-1), rows = t.numel() / width;
  if (t.stride(-1) == 1) {
    int64_t row_stride = width, nesting = -1;  // the stride the next outer dimension must have
    bool nested = true;
    for (int64_t i = t.dim() - 2; i >= 0 && nested; --i) {
      if (t.size(i) == 1) continue;
      if (nesting < 0) row_stride = t.stride(i);
      nested = nesting < 0 || t.stride(i) == nesting;
      nesting = t.stride(i) * t.size(i);
    }
    if (nested) return t.as_strided({rows, width}, {row_stride, 1});
  }
  return t.contiguous().view({rows, width});
}

at::Tensor silu_mul_cuda(const at::Tensor& gate, const at::Tensor& up) {
  const auto dtype = gate.scalar_type();
  const bool floating = dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
  if (!floating || up.scalar_type() != dtype || up.sizes() != gate.sizes() ||
      up.device() != gate.device() || gate.numel() == 0) {
    return composition::silu_mul_composition(gate, up);
  }
  const c10::cuda::CUDAGuard guard(gate.device());
  const at::Tensor g = as_rows(gate), u = as_rows(up);
  at::Tensor out = at::empty(gate.sizes(), gate.options());
  const int64_t count = g.numel(), width = g.size(1);
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, 65535);
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "silu_mul_elements", [&] {
    silu_mul_elements<<<blocks, kThreads, 0, stream>>>(
        g.data_ptr<scalar_t>(), u.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), count, width,
        g.stride(0), u.stride(0));
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

// One token's heads with unit stride along head_dim; tables [1, head_dim] and a cache of the
// same dtype (an FP8 cache, another dtype or more tokens run the composition).
bool rotary_kernel_takes(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const at::Tensor& cos, const at::Tensor& signed_sin,
                         const at::Tensor& keys, const at::Tensor& values,
                         const at::Tensor& position) {
  const auto dtype = q.scalar_type();
  const bool floating = dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
  bool ok = floating && q.dim() == 4 && q.size(2) == 1 && q.size(3) % 2 == 0 &&
            position.numel() == 1 && position.scalar_type() == at::kLong &&
            position.device() == q.device() && keys.is_contiguous() && values.is_contiguous() &&
            cos.numel() == q.size(3) && signed_sin.numel() == q.size(3) && cos.is_contiguous() &&
            signed_sin.is_contiguous();
  for (const at::Tensor* t : {&k, &v, &cos, &signed_sin, &keys, &values}) {
    ok = ok && t->scalar_type() == dtype && t->device() == q.device();
  }
  for (const at::Tensor* t : {&k, &v}) {
    ok = ok && t->dim() == 4 && t->size(0) == q.size(0) && t->size(1) == keys.size(1) &&
         t->size(2) == 1 && t->size(3) == q.size(3) && t->stride(3) == 1;
  }
  return ok && q.stride(3) == 1 && keys.sizes() == values.sizes() && keys.size(0) == q.size(0) &&
         keys.size(3) == q.size(3);
}

at::Tensor rotary_cache_write_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& cos, const at::Tensor& signed_sin,
                                   at::Tensor& keys, at::Tensor& values,
                                   const at::Tensor& position) {
  if (!rotary_kernel_takes(q, k, v, cos, signed_sin, keys, values, position)) {
    return composition::rotary_cache_write_composition(q, k, v, cos, signed_sin, keys, values,
                                                       position);
  }
  const c10::cuda::CUDAGuard guard(q.device());
  const int heads = static_cast<int>(q.size(1)), kv_heads = static_cast<int>(k.size(1));
  const int head_dim = static_cast<int>(q.size(3));
  at::Tensor q_out = at::empty({q.size(0), heads, 1, head_dim}, q.options());
  const dim3 blocks(heads + kv_heads, static_cast<unsigned>(q.size(0)));
  const int threads = std::min(256, (head_dim + kWarpSize - 1) / kWarpSize * kWarpSize);
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, q.scalar_type(), "rotary_cache_write", [&] {
        rotary_cache_write_heads<<<blocks, threads, 0, stream>>>(
            q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(), q.stride(0),
            q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            cos.data_ptr<scalar_t>(), signed_sin.data_ptr<scalar_t>(), keys.data_ptr<scalar_t>(),
            values.data_ptr<scalar_t>(), position.data_ptr<int64_t>(), q_out.data_ptr<scalar_t>(),
            heads, kv_heads, head_dim, keys.size(2));
      });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return q_out;
}

}  // namespace

// Referred to from fused_operators.cpp, so that the linker takes this file from its library.
bool cuda_kernels_linked() {
  return true;
}

TORCH_LIBRARY_IMPL(gpubench, CUDA, m) {
  m.impl("rms_norm", &rms_norm_cuda);
  m.impl("add_rms_norm", &add_rms_norm_cuda);
  m.impl("silu_mul", &silu_mul_cuda);
  m.impl("rotary_cache_write", &rotary_cache_write_cuda);
  m.impl("decode_attention", &decode_attention_cuda);    // kernels/cuda/decode_attention.cu
  m.impl("fp8_weight_linear", &fp8_weight_linear_cuda);  // kernels/cuda/weight_only_linear.cu
  m.impl("int8_weight_linear", &int8_weight_linear_cuda);
  m.impl("quantize_fp8", &quantize_fp8_cuda);  // kernels/cuda/quantize_fp8.cu
}

}  // namespace gpubench::kernels
