// The CUDA forms of gpubench's own operators (kernels/fused_operators.h). Each computes what its
// composition computes, rounding where the composition's operators round: float32 arithmetic on
// values read in the tensors' dtype, each intermediate that the composition stores rounded to
// that dtype before it is used again. Reductions sum in another order than ATen's, so RMSNorm's
// values agree to float32 rounding of the sum, not bit for bit (the GPU check compares them).
#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "kernels/fused_compositions.h"

namespace gpubench::kernels {
namespace {

constexpr int kWarp = 32;

// The sum of every thread's value in the block, in every thread. blockDim.x is a multiple of 32.
__device__ float block_sum(float value) {
  __shared__ float warp_sums[kWarp];
  __shared__ float total;
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / kWarp) ? warp_sums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      value += __shfl_xor_sync(0xffffffffu, value, offset);
    }
    if (lane == 0) total = value;
  }
  __syncthreads();
  return total;
}

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
  const float inverse_rms = rsqrtf(block_sum(squares) / static_cast<float>(width) + eps);
  T* out_row = out + row * width;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float normed = static_cast<float>(source[i]) * inverse_rms;
    const float w = static_cast<float>(weight[i]);
    out_row[i] = weight_before_rounding
                     ? static_cast<T>(normed * w)
                     : static_cast<T>(w * static_cast<float>(static_cast<T>(normed)));
  }
}

template <typename T>
__global__ void silu_mul_elements(const T* __restrict__ gate, const T* __restrict__ up,
                                  T* __restrict__ out, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float g = static_cast<float>(gate[i]);
    const T silu = static_cast<T>(g / (1.0f + expf(-g)));
    out[i] = static_cast<T>(static_cast<float>(silu) * static_cast<float>(up[i]));
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

at::Tensor silu_mul_cuda(const at::Tensor& gate, const at::Tensor& up) {
  const auto dtype = gate.scalar_type();
  const bool floating = dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
  if (!floating || up.scalar_type() != dtype || up.sizes() != gate.sizes() ||
      up.device() != gate.device() || gate.numel() == 0) {
    return composition::silu_mul_composition(gate, up);
  }
  const c10::cuda::CUDAGuard guard(gate.device());
  const at::Tensor g = gate.contiguous(), u = up.contiguous();
  at::Tensor out = at::empty_like(g);
  const int64_t count = g.numel();
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, 65535);
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "silu_mul_elements", [&] {
    silu_mul_elements<<<blocks, kThreads, 0, stream>>>(
        g.data_ptr<scalar_t>(), u.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), count);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
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
}

}  // namespace gpubench::kernels
