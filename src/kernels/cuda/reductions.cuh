// Reductions across a warp and across a block, shared by the kernels: xor shuffles, so that every
// lane (every thread) ends with the result, in the same order whichever kernel asks.
#pragma once

namespace gpubench::kernels {

constexpr int kWarpSize = 32;

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// `value` joined by `op` over the warp's 32 lanes, in every lane.
template <typename Op>
__device__ __forceinline__ float warp_reduce(float value, Op op) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  return value;
}

// `value` joined by `op` over the block, in every thread: each warp's, then the warps' (the lanes
// past the last warp holding `identity`). blockDim.x is a multiple of 32, at most 1024.
template <typename Op>
__device__ float block_reduce(float value, Op op, float identity) {
  __shared__ float per_warp[kWarpSize];
  __shared__ float total;
  value = warp_reduce(value, op);
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  if (lane == 0) per_warp[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / kWarpSize) ? per_warp[lane] : identity;
    value = warp_reduce(value, op);
    if (lane == 0) total = value;
  }
  __syncthreads();
  return total;
}

}  // namespace gpubench::kernels
