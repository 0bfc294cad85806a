// FP8 quantisation with its amax in two passes over x where the composition makes about ten: a
// whole tensor's blocks each reduce their share's largest magnitude, then every block of the cast
// reduces those few partials itself (no third launch to join them), derives the scale and casts
// its share; one block a row for a scale a row. The arithmetic after the amax is the
// composition's, operation for operation in float32 (the scale's reciprocal, the product with
// the format's largest, the rounding of the scale to x's dtype, x times it rounded to x's dtype,
// the cast), so the codes and scales are the composition's bit for bit; the rowwise power of two
// is taken exactly from the scale's exponent, where the composition takes floor(log2).
#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>

#include <cmath>

#include "kernels/cuda/quantize_fp8.h"
#include "kernels/cuda/reductions.cuh"
#include "kernels/fused_compositions.h"

namespace gpubench::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kMostAmaxBlocks = 1024;
constexpr double kLargestScale = 8.507059173023462e37;  // 2^126, as the composition

// The scale applied to x from its amax, rounded to T as the composition rounds it.
template <typename T>
__device__ float applied_scale(float amax, float smallest_amax, float largest, bool power_of_two) {
  float scale = (1.0f / fmaxf(amax, smallest_amax)) * largest;
  if (power_of_two) {
    int exponent = 0;
    frexpf(scale, &exponent);  // scale = m 2^exponent, m in [0.5, 1)
    scale = ldexpf(1.0f, exponent - 1);
  }
  return static_cast<float>(static_cast<T>(scale));
}

template <typename T, typename Format>
__device__ Format code_of(T value, float applied) {
  const T scaled = static_cast<T>(static_cast<float>(value) * applied);
  return static_cast<Format>(static_cast<float>(scaled));
}

template <typename T>
__global__ void amax_of_blocks(const T* __restrict__ x, int64_t count, float* __restrict__ amax) {
  float largest = 0.0f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    largest = fmaxf(largest, fabsf(static_cast<float>(x[i])));
  }
  largest = block_reduce(largest, Max{}, 0.0f);
  if (threadIdx.x == 0) amax[blockIdx.x] = largest;
}

template <typename T, typename Format>
__global__ void cast_tensor(const T* __restrict__ x, int64_t count, const float* __restrict__ amax,
                            int partials, float smallest_amax, float largest,
                            Format* __restrict__ codes, float* __restrict__ scale) {
  float joined = 0.0f;
  for (int p = threadIdx.x; p < partials; p += blockDim.x) joined = fmaxf(joined, amax[p]);
  const float applied =
      applied_scale<T>(block_reduce(joined, Max{}, 0.0f), smallest_amax, largest, false);
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale = 1.0f / applied;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    codes[i] = code_of<T, Format>(x[i], applied);
  }
}

template <typename T, typename Format>
__global__ void cast_rows(const T* __restrict__ x, int64_t width, float smallest_amax,
                          float largest, Format* __restrict__ codes, float* __restrict__ scales) {
  const T* row = x + blockIdx.x * width;
  float amax = 0.0f;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    amax = fmaxf(amax, fabsf(static_cast<float>(row[i])));
  }
  const float applied =
      applied_scale<T>(block_reduce(amax, Max{}, 0.0f), smallest_amax, largest, true);
  if (threadIdx.x == 0) scales[blockIdx.x] = 1.0f / applied;
  Format* out = codes + blockIdx.x * width;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x)
    out[i] = code_of<T, Format>(row[i], applied);
}

// A floating x (not double) into e4m3 or e5m2: the whole tensor, or a scale a row of a 2-D x
// (along its last dimension). Scales along the columns run the composition.
bool kernel_takes(const at::Tensor& x, at::ScalarType format, at::IntArrayRef along) {
  const auto dtype = x.scalar_type();
  const bool floating = dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
  const bool fp8 = format == at::kFloat8_e4m3fn || format == at::kFloat8_e5m2;
  const bool rows = along.size() == 1 && x.dim() == 2 && (along[0] == 1 || along[0] == -1);
  return floating && fp8 && x.numel() > 0 && (along.empty() || rows);
}

template <typename T, typename Format>
void launch(const at::Tensor& x, at::IntArrayRef along, double largest, at::Tensor& codes,
            at::Tensor& scale) {
  const auto stream = c10::cuda::getCurrentCUDAStream();
  const float smallest_amax = static_cast<float>(largest / kLargestScale);
  const int64_t count = x.numel();
  Format* out = reinterpret_cast<Format*>(codes.data_ptr());
  if (along.empty()) {
    const int blocks = static_cast<int>(
        std::min<int64_t>(kMostAmaxBlocks, (count + kThreads * 4 - 1) / (kThreads * 4)));
    at::Tensor amax = at::empty({blocks}, x.options().dtype(at::kFloat));
    amax_of_blocks<<<blocks, kThreads, 0, stream>>>(x.data_ptr<T>(), count, amax.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int cast_blocks =
        static_cast<int>(std::min<int64_t>(4096, (count + kThreads - 1) / kThreads));
    cast_tensor<T, Format><<<cast_blocks, kThreads, 0, stream>>>(
        x.data_ptr<T>(), count, amax.data_ptr<float>(), blocks, smallest_amax,
        static_cast<float>(largest), out, scale.data_ptr<float>());
  } else {
    cast_rows<T, Format><<<static_cast<unsigned>(x.size(0)), kThreads, 0, stream>>>(
        x.data_ptr<T>(), x.size(1), smallest_amax, static_cast<float>(largest), out,
        scale.data_ptr<float>());
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> quantize_fp8_cuda(const at::Tensor& x, at::ScalarType format,
                                                     at::IntArrayRef along, double largest) {
  if (!kernel_takes(x, format, along)) {
    return composition::quantize_fp8_composition(x, format, along, largest);
  }
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor values = x.contiguous();
  at::Tensor codes = at::empty(values.sizes(), values.options().dtype(format));
  at::Tensor scale = along.empty()
                         ? at::empty({}, values.options().dtype(at::kFloat))
                         : at::empty({values.size(0), 1}, values.options().dtype(at::kFloat));
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, values.scalar_type(), "quantize_fp8", [&] {
        if (format == at::kFloat8_e4m3fn) {
          launch<scalar_t, c10::Float8_e4m3fn>(values, along, largest, codes, scale);
        } else {
          launch<scalar_t, c10::Float8_e5m2>(values, along, largest, codes, scale);
        }
      });
  return {codes, scale};
}

}  // namespace gpubench::kernels
