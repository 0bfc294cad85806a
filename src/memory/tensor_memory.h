// The bytes held by tensors, per device: the CUDA caching allocator's own counts on a GPU, and
// on the CPU those of gpubench's counting allocator, which wraps LibTorch's CPU allocator once
// installed (track_cpu_tensors) so that a CPU run has the same figures a GPU run has: bytes
// allocated now, the peak since a reset, and a limit beyond which an allocation fails as out of
// memory (`--memory-limit`, which makes memory behaviour testable on the CPU).
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace gpubench::tensor_memory {

// Installs the counting CPU allocator; idempotent. Tensors allocated before are not counted
// (they are freed by their own allocator).
void track_cpu_tensors();

// CPU runs (docs/method.md, "Host memory"): glibc's malloc keeps the tensor memory a step frees
// for the next step instead of handing it back to the kernel, which then faults every page in
// again (zeroed) on first touch: the mmap threshold fixed at its dynamic maximum (32 MiB) and the
// heap never trimmed. Without this ResNet-50 (fp32, batch 8, 2 cores) took twice the page faults
// and ran 2-14 % slower (three runs each), by an amount that depended on the process's
// allocation history. Idempotent; a no-op on other C libraries. The reference scripts set the
// same (scripts/trial_timing.py).
void keep_freed_host_memory();

// Hands the C library's free heap pages back to the kernel (glibc's malloc_trim; a no-op on other C
// libraries), which keep_freed_host_memory() otherwise keeps: fit's probes, between shapes, so
// that one shape's scattered free pages do not sit in the process's memory beside the next
// shape's peak (Mask R-CNN fp16: 3.8 GB of peak RSS with it, 4.4 GB without, reusing freed blocks).
void trim_host_heap();

// fit's probes, while one lives: the counting allocator keeps freed blocks of 32 MiB or more (up to
// 1 GiB of them) for the next allocation of the same size, where glibc would hand them
// back to the kernel (above its 32 MiB mmap threshold) and the next would fault every page in
// again, zeroed. The probes allocate the same weight-sized tensors (16-bit copies, gradients) at
// every shape. What the allocator counts is unchanged: the bytes of live tensors.
// They keep no more than the live tensors' bytes have fallen below their highest since it was
// made, letting the largest go as those grow again: the kept blocks take the process no higher
// than its tensors had (Mask R-CNN fp32: 1 GiB of them 17.9 s and 3.1 GB of peak RSS; 256 MiB
// unbounded, 19.4 s and 3.4 GB; 1 GiB unbounded took Transformer-XL base to 4.3 GB).
class ReusedFreedBlocks {
 public:
  ReusedFreedBlocks();
  ~ReusedFreedBlocks();
  ReusedFreedBlocks(const ReusedFreedBlocks&) = delete;
  ReusedFreedBlocks& operator=(const ReusedFreedBlocks&) = delete;

  // The freed blocks' bytes kept now.
  static int64_t kept_bytes();
};

int64_t allocated_bytes(torch::Device device);
int64_t peak_allocated_bytes(torch::Device device);
int64_t peak_reserved_bytes(torch::Device device);  // CUDA; 0 on the CPU
void reset_peak(torch::Device device);
// Frees what the CUDA caching allocator holds unused; nothing on the CPU.
void release_cached(torch::Device device);
// What peak_allocated_bytes counts, in words, for the result.
std::string peak_source(torch::Device device);
// What set_limit caps on the device, in words, for the result: CUDA's reserved bytes admit fewer
// tensor bytes than the CPU's limit does (docs/memory.md).
std::string limit_caps(torch::Device device);

// From now on an allocation that would take the device's tensor bytes above `bytes` fails as
// out of memory (0: no limit). CUDA: the caching allocator's memory fraction.
void set_limit(torch::Device device, int64_t bytes);

// Whether the device's memory came within 10 % of `limit` (0: the device's total) since the last
// reset: reserved bytes on CUDA, tensor bytes on the CPU. Decides whether a library error that a
// failed workspace allocation also causes counts as out of memory (torch_support/compat.h).
bool near_limit(torch::Device device, int64_t limit);

// A CUDA device's total memory; 0 on the CPU.
int64_t device_total_bytes(torch::Device device);

// The process's peak resident set (getrusage), in bytes.
int64_t process_peak_rss_bytes();

}  // namespace gpubench::tensor_memory
