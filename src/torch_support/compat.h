// The one place that knows the differences between LibTorch 1.13 (Debian) and 2.x.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include <ATen/ATen.h>
#include <torch/version.h>

#define GPUBENCH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||           \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace c10d {
class ProcessGroup;
class Backend;
}  // namespace c10d

namespace gpubench::compat {

// at::cuda::CUDAGraph keeps the graph it captured past capture_end when built with keep_graph,
// so that its nodes can be counted (2.8; before, capture_end instantiates it and drops it).
#define GPUBENCH_GRAPH_KEEPS_ITS_NODES GPUBENCH_TORCH_AT_LEAST(2, 8)

// c10::Allocator::allocate: const in 1.13, not since 2.3.
#if GPUBENCH_TORCH_AT_LEAST(2, 3)
#define GPUBENCH_ALLOCATOR_CONST
#else
#define GPUBENCH_ALLOCATOR_CONST const
#endif

// What a c10d process group implementation (Gloo, NCCL) derives from: 2.0 split the backends
// out of ProcessGroup into Backend.
#if GPUBENCH_TORCH_AT_LEAST(2, 0)
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

// NCCL's asynchronous error handling (a timed-out or failed collective ends the process instead
// of hanging it): 2.2 renamed the switch.
#if GPUBENCH_TORCH_AT_LEAST(2, 2)
inline constexpr const char* kNcclAsyncErrorHandlingVariable = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
#else
inline constexpr const char* kNcclAsyncErrorHandlingVariable = "NCCL_ASYNC_ERROR_HANDLING";
#endif

// Ends a process group's communicators cleanly (NCCL: finalize, then destroy) on a run that
// succeeded on every rank. 2.7 gave every c10d backend shutdown(); before it, the backend's
// destructor aborts NCCL's communicators instead (and 2.x warns that the group was not destroyed).
void shutdown_collective_backend(CollectiveBackend& backend);

// PyTorch's fused SGD kernel (SGD(fused=True)): CUDA only, and only in 2.x builds that have it.
#if GPUBENCH_TORCH_AT_LEAST(2, 4) && GPUBENCH_WITH_CUDA
inline constexpr bool kHasFusedSgd = true;
#else
inline constexpr bool kHasFusedSgd = false;
#endif
// at::_fused_sgd_ where kHasFusedSgd; throws elsewhere. With `found_inf` (float32 [1] on the
// device) the kernel leaves everything unchanged where it is nonzero: no host sync.
void fused_sgd_(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers,
                double weight_decay, double momentum, double lr, double dampening, bool nesterov,
                bool is_first_step, const std::optional<at::Tensor>& found_inf = std::nullopt);

// PyTorch's fused AdamW kernel (AdamW(fused=True)): 2.4 and newer have it for CUDA and the CPU.
bool fused_adamw_available(const c10::Device& device);
// at::_fused_adamw_ (no AMSGrad) where fused_adamw_available; throws elsewhere. `state_steps`
// are float32 [] tensors on the device, already counting this step.
void fused_adamw_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                  at::TensorList exp_avg_sqs, at::TensorList state_steps, double lr, double beta1,
                  double beta2, double weight_decay, double eps,
                  const std::optional<at::Tensor>& found_inf = std::nullopt);

// Autocast switches per device type: 2.4 made them take the device type as an argument.
bool autocast_enabled(c10::DeviceType device);
void set_autocast_enabled(c10::DeviceType device, bool enabled);
void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype);
at::ScalarType autocast_dtype(c10::DeviceType device);

// softmax(q k^T / sqrt(d) [+ causal mask]) v over [batch, heads, tokens, d], with dropout on the
// weights: 2.x's fused kernels (flash, memory-efficient) through at::scaled_dot_product_attention;
// 1.13 has none, so the same maths in plain operators there, which hold the scores
// (scaled_dot_product_attention_score_bytes).
#if GPUBENCH_TORCH_AT_LEAST(2, 0)
inline constexpr bool kHasFusedAttention = true;
#else
inline constexpr bool kHasFusedAttention = false;
#endif
at::Tensor scaled_dot_product_attention(const at::Tensor& q, const at::Tensor& k,
                                        const at::Tensor& v, double dropout, bool causal);
// The most scaled_dot_product_attention holds at once beyond its inputs, in bytes, for `tokens`
// queries over `keys` keys in elements of `element_bytes`: 0 for the fused kernels; for 1.13's
// operators two copies of the scores [batch, heads, tokens, keys] (each step makes its own before
// the last is freed: the product and its scaling, the masked copy, the softmax), the causal mask
// and the output.
int64_t scaled_dot_product_attention_score_bytes(int64_t batch, int64_t heads, int64_t tokens,
                                                 int64_t keys, int64_t head_dim,
                                                 int64_t element_bytes);

// RMSNorm's normalisation over the last dimension, x / sqrt(mean(x^2) + eps), in float32 and
// rounded once to x's dtype; with `weight` (of x's dtype) multiplied in float32 before that
// rounding. at::rms_norm from 2.4: one fused kernel on CUDA where LibTorch has one
// (_fused_rms_norm). Before 2.4, and under autocast (whose rule for at::rms_norm is the device's
// own), the same arithmetic in plain operators, as Hugging Face's RMSNorm writes it.
at::Tensor rms_norm(const at::Tensor& x, double eps,
                    const std::optional<at::Tensor>& weight = std::nullopt);

// FP8 matmuls (docs/fp8.md): at::_scaled_mm with one tensor out and rowwise scales came in 2.5
// (2.1 to 2.4 return (out, amax) and scale per tensor only); the float8 dtypes with it.
#if GPUBENCH_TORCH_AT_LEAST(2, 5)
inline constexpr bool kHasFp8 = true;
#else
inline constexpr bool kHasFp8 = false;
#endif
// The lowest LibTorch that gpubench's FP8 path builds with, for the refusal elsewhere.
inline constexpr const char* kFp8MinimumLibtorch = "2.5";
// e4m3 (max 448) and e5m2 (max 57344). Throw where !kHasFp8.
at::ScalarType float8_e4m3();
at::ScalarType float8_e5m2();
// (a * scale_a) @ (b * scale_b) in `out_dtype`: `a` [M, K] row-major and `b` [K, N]
// column-major, both FP8; float32 scales, [] each (tensorwise) or [M, 1] and [1, N] (rowwise).
// LibTorch's CPU kernel scales per tensor only: there rowwise scales multiply the product
// instead, the same maths. Throws where !kHasFp8.
at::Tensor scaled_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                     const at::Tensor& scale_b, at::ScalarType out_dtype, bool use_fast_accum);
// Whether scaled_mm runs on the CPU in this LibTorch (2.11's does; for tests, never for speed):
// tried once on a tiny product.
bool scaled_mm_runs_on_cpu();

// Weight-only integer matmuls (docs/inference.md#integer-weights): int4 (tinygemm's packing,
// group-wise scales and zeros) and int8 (a scale per output channel), LibTorch's own kernels:
// _weight_int4pack_mm on CUDA (sm80+) and _weight_int4pack_mm_for_cpu on the CPU, each with its
// own packing, and _weight_int8pack_mm on both. The CPU's int4 pair came in 2.6.
#if GPUBENCH_TORCH_AT_LEAST(2, 6)
inline constexpr bool kHasIntWeights = true;
#else
inline constexpr bool kHasIntWeights = false;
#endif
inline constexpr const char* kIntWeightsMinimumLibtorch = "2.6";
// `codes` int32 [out, in] of values 0..15, packed for int4_weight_mm on `codes`' device, with
// in / (16 * inner_k_tiles) tiles (inner_k_tiles 2, 4 or 8). Throw where !kHasIntWeights.
at::Tensor pack_int4_weight(const at::Tensor& codes, int64_t inner_k_tiles);
// x [rows, in] (bf16) times the packed weight's transpose: [rows, out] in x's dtype. Per group of
// `group` inputs and per output, scales_and_zeros [in / group, out, 2] (x's dtype) give the
// weight back as (code - 8) * scale + zero.
at::Tensor int4_weight_mm(const at::Tensor& x, const at::Tensor& packed, int64_t group,
                          const at::Tensor& scales_and_zeros);
// x [rows, in] times (codes int8 [out, in] * scales [out])^T, [rows, out] in x's dtype.
at::Tensor int8_weight_mm(const at::Tensor& x, const at::Tensor& codes, const at::Tensor& scales);

// TF32 for cuBLAS matmuls and cuDNN convolutions.
void set_tf32(bool matmul, bool cudnn);
bool tf32_matmul_enabled();
bool tf32_cudnn_enabled();

// Why `error` is an allocation failure, whichever LibTorch or library threw it: the allocator's
// error type, its words, or a library's *_ALLOC_FAILED status; empty when it is not one. With
// `near_limit` (memory was within reach of its limit when it failed), cuDNN's internal error and
// "unable to find an engine" count too: that is how cuDNN reports a workspace it could not get.
std::string out_of_memory_cause(const std::exception& error, bool near_limit = false);
std::string out_of_memory_cause_of_message(const std::string& what, bool near_limit);

// The op profiler (docs/profiling.md): Kineto on 2.x; the legacy autograd profiler on 1.13,
// whose Debian build has no Kineto. It records the ops of the calling thread and of the autograd
// threads its backward passes start, with their input shapes; with `cuda`, the device's kernels
// too (Kineto's CUDA activity; the legacy profiler's CUDA events).
const char* profiler_name();  // "kineto" or "legacy"
void start_profiler(bool cuda);
// Stops the profiler started by start_profiler and returns its Chrome trace (a JSON object with
// "traceEvents", as Perfetto and chrome://tracing open). Kineto writes the trace through a file:
// it goes to a fresh temporary file in `scratch_directory`, removed again.
std::string stop_profiler(const std::string& scratch_directory);

// A tensor's storage emptied in place (its bytes freed, every view of it kept) and given back
// its bytes, as FSDP frees and regathers parameters under the views autograd saved.
void release_storage(const at::Tensor& tensor);
// `tensor` (contiguous, offset 0) gets storage for its elements again, uninitialised.
void reserve_storage(const at::Tensor& tensor);

// "1.13.0" or "2.11.0".
std::string libtorch_version();

}  // namespace gpubench::compat
