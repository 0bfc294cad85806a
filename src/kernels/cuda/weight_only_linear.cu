// Weight-only products for a decode step's few rows: x [rows <= 8, in] against one-byte codes
// [out, in] (e4m3, or int8) times a scale for the weight or each row. At batch 1 a product reads
// every code once and does two flops for each: the kernel streams the codes in 16-byte loads, a
// warp an output row, each code converted to float32 once and multiplied by every row of x
// (which stays in the caches), the row's sum scaled and rounded once. The compositions sum in
// another order, so the two agree to float32 rounding of the sums, not bit for bit (the GPU check
// compares them).
#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/weight_only_linear.h"
#include "kernels/fused_compositions.h"
#include "kernels/fused_operators.h"

namespace gpubench::kernels {
namespace {

constexpr int kWarpsPerBlock = 8;  // output rows a block
constexpr int kCodesPerLoad = 16;  // one 16-byte load of e4m3 codes

struct E4m3Codes {};
struct Int8Codes {};

// 16 e4m3 codes as float32, two at a time through the half2 conversion (one instruction on
// sm_89 and later, a few elsewhere).
__device__ void codes_to_float(E4m3Codes, const uint4& packed, float (&values)[kCodesPerLoad]) {
  const auto* pairs = reinterpret_cast<const __nv_fp8x2_storage_t*>(&packed);
#pragma unroll
  for (int i = 0; i < kCodesPerLoad / 2; ++i) {
    const __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(pairs[i], __NV_E4M3);
    const float2 two = __half22float2(*reinterpret_cast<const __half2*>(&raw));
    values[2 * i] = two.x;
    values[2 * i + 1] = two.y;
  }
}

// 16 int8 codes as float32.
__device__ void codes_to_float(Int8Codes, const uint4& packed, float (&values)[kCodesPerLoad]) {
  const auto* codes = reinterpret_cast<const int8_t*>(&packed);
#pragma unroll
  for (int i = 0; i < kCodesPerLoad; ++i) values[i] = static_cast<float>(codes[i]);
}

// The dot product of 16 of x's values (16-byte aligned) with 16 weights.
template <typename T>
__device__ float dot16(const T* x, const float (&weights)[kCodesPerLoad]) {
  constexpr int kPerLoad = 16 / sizeof(T);
  float sum = 0.0f;
#pragma unroll
  for (int load = 0; load < kCodesPerLoad / kPerLoad; ++load) {
    const uint4 packed = reinterpret_cast<const uint4*>(x)[load];
    const T* values = reinterpret_cast<const T*>(&packed);
#pragma unroll
    for (int i = 0; i < kPerLoad; ++i) {
      sum += static_cast<float>(values[i]) * weights[load * kPerLoad + i];
    }
  }
  return sum;
}

template <typename T, typename Codes, typename Scale, int kMaxRows>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarpSize)
    weight_only_rows(const T* __restrict__ x, const uint8_t* __restrict__ codes,
                     const Scale* __restrict__ scale, int64_t scale_stride, T* __restrict__ out,
                     int rows, int64_t in_features, int64_t out_features) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  if (row >= out_features) return;
  const uint8_t* code_row = codes + row * in_features;
  float sums[kMaxRows];
#pragma unroll
  for (int r = 0; r < kMaxRows; ++r) sums[r] = 0.0f;
  for (int64_t i = static_cast<int64_t>(lane) * kCodesPerLoad; i < in_features;
       i += kWarpSize * kCodesPerLoad) {
    float weights[kCodesPerLoad];
    codes_to_float(Codes{}, *reinterpret_cast<const uint4*>(code_row + i), weights);
#pragma unroll
    for (int r = 0; r < kMaxRows; ++r) {
      if (r < rows) sums[r] += dot16(x + r * in_features + i, weights);
    }
  }
  const float row_scale = static_cast<float>(scale[row * scale_stride]);
#pragma unroll
  for (int r = 0; r < kMaxRows; ++r) {
    if (r >= rows) break;
    const float sum = warp_reduce(sums[r], Sum{});
    if (lane == 0) out[r * out_features + row] = static_cast<T>(sum * row_scale);
  }
}

bool aligned16(const at::Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

// At most kMatrixVectorRows rows of a floating x, contiguous and 16-byte aligned, one-byte codes
// of `code_dtype` contiguous with `in` a multiple of 16, one scale of `scale_dtype` or one a row.
bool kernel_takes(const at::Tensor& x, const at::Tensor& codes, at::ScalarType code_dtype,
                  const at::Tensor& scale, at::ScalarType scale_dtype) {
  const auto dtype = x.scalar_type();
  const bool floating = dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
  if (!floating || codes.dim() != 2 || codes.scalar_type() != code_dtype) return false;
  const int64_t in = codes.size(1), out = codes.size(0);
  const int64_t rows = x.numel() / std::max<int64_t>(in, 1);
  return in > 0 && in % kCodesPerLoad == 0 && x.size(-1) == in && rows >= 1 &&
         rows <= kMatrixVectorRows && x.is_contiguous() && codes.is_contiguous() && aligned16(x) &&
         aligned16(codes) && scale.scalar_type() == scale_dtype && scale.is_contiguous() &&
         (scale.numel() == 1 || scale.numel() == out) && x.device() == codes.device() &&
         scale.device() == codes.device();
}

template <typename Codes, typename Scale>
at::Tensor launch(const at::Tensor& x, const at::Tensor& codes, const at::Tensor& scale) {
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t in = codes.size(1), out_features = codes.size(0);
  const int rows = static_cast<int>(x.numel() / in);
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out_features;
  at::Tensor out = at::empty(shape, x.options());
  const unsigned blocks =
      static_cast<unsigned>((out_features + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const int64_t scale_stride = scale.numel() == 1 ? 0 : 1;
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, x.scalar_type(), "weight_only_rows", [&] {
        const auto go = [&](auto max_rows) {
          weight_only_rows<scalar_t, Codes, Scale, decltype(max_rows)::value>
              <<<blocks, kWarpsPerBlock * kWarpSize, 0, stream>>>(
                  x.data_ptr<scalar_t>(), reinterpret_cast<const uint8_t*>(codes.data_ptr()),
                  reinterpret_cast<const Scale*>(scale.data_ptr()), scale_stride,
                  out.data_ptr<scalar_t>(), rows, in, out_features);
        };
        if (rows == 1) {
          go(std::integral_constant<int, 1>{});
        } else if (rows <= 4) {
          go(std::integral_constant<int, 4>{});
        } else {
          go(std::integral_constant<int, 8>{});
        }
      });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace

at::Tensor fp8_weight_linear_cuda(const at::Tensor& x, const at::Tensor& codes,
                                  const at::Tensor& scale) {
  if (!kernel_takes(x, codes, at::kFloat8_e4m3fn, scale, at::kFloat)) {
    return composition::fp8_weight_linear_composition(x, codes, scale);
  }
  return launch<E4m3Codes, float>(x, codes, scale);
}

// int8's scales are in the activations' dtype (features/weights/int8_weights.h).
at::Tensor int8_weight_linear_cuda(const at::Tensor& x, const at::Tensor& codes,
                                   const at::Tensor& scales) {
  if (!kernel_takes(x, codes, at::kChar, scales, x.scalar_type())) {
    return composition::int8_weight_linear_composition(x, codes, scales);
  }
  if (x.scalar_type() == at::kBFloat16) return launch<Int8Codes, c10::BFloat16>(x, codes, scales);
  if (x.scalar_type() == at::kHalf) return launch<Int8Codes, c10::Half>(x, codes, scales);
  return launch<Int8Codes, float>(x, codes, scales);
}

}  // namespace gpubench::kernels
