// Decode attention split along the cache (flash-decoding): one token's query heads against the
// cache up to a position held on the device, so that a CUDA graph replays it at every position
// and no launch reads past the filled cache. The cache is cut into splits of `chunk` positions;
// one block a (split, key/value head, sequence) computes its part of the softmax online for the
// whole group of query heads that share the key/value head (each key and value row read once),
// and a second kernel joins the splits, with the heads' sink logits where the model has them
// (gpt-oss: each joins its head's softmax as one more score with no value). Everything is
// float32 from the values read on; the composition rounds its scores and probabilities to q's
// dtype (with sinks: its probabilities to the values' dtype), so the two agree to that rounding,
// not bit for bit (the GPU check compares them).
#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/macros/Macros.h>

#include <cmath>

#include "kernels/cuda/decode_attention.h"
#include "kernels/cuda/reductions.cuh"
#include "kernels/fused_compositions.h"
#include "kernels/fused_operators.h"

namespace gpubench::kernels {
namespace {

constexpr int kWarps = 4;         // a block's warps, each taking every fourth run of positions
constexpr int kUnroll = 4;        // the positions a warp reads before it computes on them
constexpr int kMinChunk = 64;     // positions a split, at least
constexpr int kMostSplits = 256;  // a longer cache takes longer splits

// Partials [batch, heads, splits] (max and sum) and [batch, heads, splits, head_dim] (the
// unnormalised output) of each split that holds a position up to the last; splits past it
// write nothing (the join reads none of them). Each lane holds kVec of head_dim's elements.
template <typename T, typename Cache, int kVec, int kMaxGroup>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    attend_splits(const T* __restrict__ q, int64_t q_batch_stride, int64_t q_head_stride,
                  const Cache* __restrict__ keys, const Cache* __restrict__ values,
                  int64_t cache_batch_stride, int64_t cache_head_stride,
                  const int64_t* __restrict__ position, int64_t capacity, int group, int chunk,
                  float scale, float* __restrict__ partial_out, float* __restrict__ partial_max,
                  float* __restrict__ partial_sum) {
  constexpr int kHeadDim = kVec * kWarpSize;
  const int split = blockIdx.x, kv_head = blockIdx.y, batch = blockIdx.z;
  const int splits = gridDim.x, heads = gridDim.y * group;
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int64_t last = *position;
  CUDA_KERNEL_ASSERT(last >= 0 && last < capacity);
  const int64_t begin = static_cast<int64_t>(split) * chunk;
  if (begin > last) return;
  const int64_t end = min(begin + chunk, last + 1);

  float query[kMaxGroup][kVec];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    const T* row =
        q + batch * q_batch_stride + (kv_head * group + min(g, group - 1)) * q_head_stride;
#pragma unroll
    for (int i = 0; i < kVec; ++i) query[g][i] = static_cast<float>(row[lane * kVec + i]) * scale;
  }
  float running_max[kMaxGroup], running_sum[kMaxGroup], out[kMaxGroup][kVec];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    running_max[g] = -INFINITY;
    running_sum[g] = 0.0f;
#pragma unroll
    for (int i = 0; i < kVec; ++i) out[g][i] = 0.0f;
  }
  const int64_t head_offset = batch * cache_batch_stride + kv_head * cache_head_stride;
  const Cache* key_rows = keys + head_offset;
  const Cache* value_rows = values + head_offset;
  for (int64_t first = begin + warp * kUnroll; first < end; first += kWarps * kUnroll) {
    float key[kUnroll][kVec], value[kUnroll][kVec];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t at = (first + u < end ? first + u : first) * kHeadDim + lane * kVec;
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        key[u][i] = static_cast<float>(key_rows[at + i]);
        value[u][i] = static_cast<float>(value_rows[at + i]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (first + u >= end) break;  // the same in every lane of the warp
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g) {
        if (g >= group) break;
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < kVec; ++i) dot += query[g][i] * key[u][i];
        const float score = warp_reduce(dot, Sum{});
        const float new_max = fmaxf(running_max[g], score);
        const float kept = expf(running_max[g] - new_max), weight = expf(score - new_max);
        running_sum[g] = running_sum[g] * kept + weight;
#pragma unroll
        for (int i = 0; i < kVec; ++i) out[g][i] = out[g][i] * kept + weight * value[u][i];
        running_max[g] = new_max;
      }
    }
  }

  // The block's warps joined: each warp's max, sum and output for each head of the group.
  __shared__ float warp_max[kWarps][kMaxGroup], warp_total[kWarps][kMaxGroup];
  __shared__ float warp_out[kWarps][kMaxGroup][kHeadDim];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    if (lane == 0) {
      warp_max[warp][g] = running_max[g];
      warp_total[warp][g] = running_sum[g];
    }
#pragma unroll
    for (int i = 0; i < kVec; ++i) warp_out[warp][g][lane * kVec + i] = out[g][i];
  }
  __syncthreads();
  for (int t = threadIdx.x; t < group * kHeadDim; t += blockDim.x) {
    const int g = t / kHeadDim, d = t % kHeadDim;
    float block_max = -INFINITY;
    for (int w = 0; w < kWarps; ++w) block_max = fmaxf(block_max, warp_max[w][g]);
    float total = 0.0f, sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) {
      if (warp_max[w][g] == -INFINITY) continue;  // a warp with no position in this split
      const float weight = expf(warp_max[w][g] - block_max);
      total += warp_total[w][g] * weight;
      sum += warp_out[w][g][d] * weight;
    }
    const int64_t row =
        (static_cast<int64_t>(batch) * heads + kv_head * group + g) * splits + split;
    partial_out[row * kHeadDim + d] = sum;
    if (d == 0) {
      partial_max[row] = block_max;
      partial_sum[row] = total;
    }
  }
}

// One block a (head, sequence), a thread an element of head_dim: the splits up to the last
// position joined, with the head's sink where `sinks` (float32 [heads]) is given, normalised and
// rounded to T.
template <typename T, typename Sink>
__global__ void join_splits(const float* __restrict__ partial_out,
                            const float* __restrict__ partial_max,
                            const float* __restrict__ partial_sum, const int64_t* position,
                            const Sink* __restrict__ sinks, int chunk, int splits, int head_dim,
                            T* __restrict__ attended) {
  const int64_t row = static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
  const int used = static_cast<int>(*position / chunk) + 1;
  const float* maxima = partial_max + row * splits;
  const float* sums = partial_sum + row * splits;
  float overall = -INFINITY;
  for (int s = 0; s < used; ++s) overall = fmaxf(overall, maxima[s]);
  const float sink = sinks ? static_cast<float>(sinks[blockIdx.x]) : -INFINITY;
  overall = fmaxf(overall, sink);
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float total = sinks ? expf(sink - overall) : 0.0f, sum = 0.0f;
    for (int s = 0; s < used; ++s) {
      const float weight = expf(maxima[s] - overall);
      total += sums[s] * weight;
      sum += partial_out[(row * splits + s) * head_dim + d] * weight;
    }
    attended[row * head_dim + d] = static_cast<T>(sum / total);
  }
}

// One token's heads along a unit-stride head_dim of 64 or 128, a group of at most 16 query heads
// a key/value head, the cache's rows contiguous in q's dtype or FP8 (e4m3); anything else runs
// the composition.
bool kernel_takes(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                  const at::Tensor& position, const c10::optional<at::Tensor>& sinks) {
  if (sinks.has_value() && sinks->defined() &&
      (sinks->numel() != q.size(1) || sinks->device() != q.device() ||
       !sinks->is_floating_point())) {
    return false;
  }
  const auto dtype = q.scalar_type();
  const bool floating = dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
  const auto cache = keys.scalar_type();
  const bool cache_ok = cache == dtype || cache == at::kFloat8_e4m3fn;
  if (!floating || !cache_ok || q.dim() != 4 || keys.dim() != 4 || q.size(2) != 1) return false;
  const int64_t head_dim = q.size(3), kv_heads = keys.size(1);
  return kv_heads > 0 && q.size(1) % kv_heads == 0 &&
         decode_attention_kernel_takes(head_dim, q.size(1) / kv_heads) && q.stride(3) == 1 &&
         keys.size(0) == q.size(0) && keys.size(3) == head_dim && keys.stride(3) == 1 &&
         keys.stride(2) == head_dim && values.sizes() == keys.sizes() &&
         values.strides() == keys.strides() && values.scalar_type() == cache &&
         keys.device() == q.device() && values.device() == q.device() && position.numel() == 1 &&
         position.scalar_type() == at::kLong && position.device() == q.device() &&
         keys.size(2) > 0 && q.numel() > 0;
}

template <typename T, typename Cache, int kVec, int kMaxGroup>
void launch_splits(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                   const at::Tensor& position, int group, int chunk, double scale,
                   at::Tensor& partial_out, at::Tensor& partial_max, at::Tensor& partial_sum) {
  const dim3 blocks(static_cast<unsigned>(partial_out.size(2)), static_cast<unsigned>(keys.size(1)),
                    static_cast<unsigned>(q.size(0)));
  attend_splits<T, Cache, kVec, kMaxGroup>
      <<<blocks, kWarps * kWarpSize, 0, c10::cuda::getCurrentCUDAStream()>>>(
          q.data_ptr<T>(), q.stride(0), q.stride(1),
          reinterpret_cast<const Cache*>(keys.data_ptr()),
          reinterpret_cast<const Cache*>(values.data_ptr()), keys.stride(0), keys.stride(1),
          position.data_ptr<int64_t>(), keys.size(2), group, chunk, static_cast<float>(scale),
          partial_out.data_ptr<float>(), partial_max.data_ptr<float>(),
          partial_sum.data_ptr<float>());
}

template <typename T, typename Cache>
void launch_for_shape(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                      const at::Tensor& position, int group, int chunk, double scale,
                      at::Tensor& partial_out, at::Tensor& partial_max, at::Tensor& partial_sum) {
  const bool wide = q.size(3) == 128, large_group = group > 8;
  const auto go = [&](auto vec, auto max_group) {
    launch_splits<T, Cache, decltype(vec)::value, decltype(max_group)::value>(
        q, keys, values, position, group, chunk, scale, partial_out, partial_max, partial_sum);
  };
  using Vec2 = std::integral_constant<int, 2>;
  using Vec4 = std::integral_constant<int, 4>;
  using Group8 = std::integral_constant<int, 8>;
  using Group16 = std::integral_constant<int, 16>;
  if (wide) {
    large_group ? go(Vec4{}, Group16{}) : go(Vec4{}, Group8{});
  } else {
    large_group ? go(Vec2{}, Group16{}) : go(Vec2{}, Group8{});
  }
}

}  // namespace

at::Tensor decode_attention_cuda(const at::Tensor& q, const at::Tensor& keys,
                                 const at::Tensor& values, const at::Tensor& position, double scale,
                                 const c10::optional<at::Tensor>& sinks) {
  if (!kernel_takes(q, keys, values, position, sinks)) {
    return composition::decode_attention_composition(q, keys, values, position, scale, sinks);
  }
  const c10::cuda::CUDAGuard guard(q.device());
  const int64_t batch = q.size(0), heads = q.size(1), head_dim = q.size(3);
  const int64_t capacity = keys.size(2);
  const int group = static_cast<int>(heads / keys.size(1));
  const int64_t longest = (capacity + kMostSplits - 1) / kMostSplits;
  const int chunk = static_cast<int>(
      std::max<int64_t>(kMinChunk, (longest + kMinChunk - 1) / kMinChunk * kMinChunk));
  const int64_t splits = (capacity + chunk - 1) / chunk;
  const auto floats = q.options().dtype(at::kFloat);
  at::Tensor partial_out = at::empty({batch, heads, splits, head_dim}, floats);
  at::Tensor partial_max = at::empty({batch, heads, splits}, floats);
  at::Tensor partial_sum = at::empty({batch, heads, splits}, floats);
  at::Tensor attended = at::empty({batch, heads, 1, head_dim}, q.options());
  // The sinks read as they are held where that is q's dtype or float32 (no cast launched).
  const bool with_sinks = sinks.has_value() && sinks->defined();
  at::Tensor sink_logits;
  if (with_sinks) {
    const auto held = sinks->scalar_type();
    sink_logits = (held == q.scalar_type() ? *sinks : sinks->to(at::kFloat)).contiguous();
  }
  const bool fp8_cache = keys.scalar_type() == at::kFloat8_e4m3fn;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, q.scalar_type(), "decode_attention", [&] {
        if (fp8_cache) {
          launch_for_shape<scalar_t, c10::Float8_e4m3fn>(q, keys, values, position, group, chunk,
                                                         scale, partial_out, partial_max,
                                                         partial_sum);
        } else {
          launch_for_shape<scalar_t, scalar_t>(q, keys, values, position, group, chunk, scale,
                                               partial_out, partial_max, partial_sum);
        }
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        const auto join = [&](const auto* sink_data) {
          join_splits<<<dim3(heads, batch), head_dim, 0, c10::cuda::getCurrentCUDAStream()>>>(
              partial_out.data_ptr<float>(), partial_max.data_ptr<float>(),
              partial_sum.data_ptr<float>(), position.data_ptr<int64_t>(), sink_data, chunk,
              static_cast<int>(splits), static_cast<int>(head_dim), attended.data_ptr<scalar_t>());
        };
        if (with_sinks && sink_logits.scalar_type() == q.scalar_type()) {
          join(sink_logits.data_ptr<scalar_t>());
        } else {
          join(with_sinks ? sink_logits.data_ptr<float>() : static_cast<const float*>(nullptr));
        }
      });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return attended;
}

}  // namespace gpubench::kernels
