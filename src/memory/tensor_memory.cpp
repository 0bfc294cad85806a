#include "memory/tensor_memory.h"

#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "common/log.h"
#include "results/memory_info.h"
#include "torch_support/compat.h"

namespace gpubench::tensor_memory {
namespace {

// Allocates through c10's alloc_cpu (what LibTorch's default CPU allocator uses) with a header
// in front of the data that holds the size, so that the deleter needs only the data pointer and
// raw_allocate keeps working. The header is one alignment unit, so the data stays aligned.
class CountingCpuAllocator final : public c10::Allocator {
 public:
  static constexpr size_t kHeader = 64;  // c10's CPU alignment

  c10::DataPtr allocate(size_t bytes) GPUBENCH_ALLOCATOR_CONST override {
    if (bytes == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
    const auto size = static_cast<int64_t>(bytes);
    const int64_t now = current_.fetch_add(size) + size;
    const int64_t limit = limit_.load();
    if (limit > 0 && now > limit) {
      current_.fetch_sub(size);
      throw std::runtime_error("CPU out of memory: allocating " + bytes_text(size) +
                               " would take tensor memory to " + bytes_text(now) +
                               ", above the memory limit of " + bytes_text(limit));
    }
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    void* block = reused_block(bytes + kHeader, now);
    try {
      if (block == nullptr) block = c10::alloc_cpu(bytes + kHeader);
    } catch (...) {
      current_.fetch_sub(size);
      throw;
    }
    *static_cast<int64_t*>(block) = size;
    void* data = static_cast<char*>(block) + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  // 2.x asks allocators to copy their own blocks; the same memcpy as the default allocator's.
  void copy_data(void* destination, const void* source, std::size_t count) const {
    std::memcpy(destination, source, count);
  }

  static void release(void* data) {
    if (data == nullptr) return;
    void* block = static_cast<char*>(data) - kHeader;
    const int64_t size = *static_cast<int64_t*>(block);
    instance().current_.fetch_sub(size);
    if (!instance().keep_freed(block, static_cast<size_t>(size) + kHeader)) c10::free_cpu(block);
  }

  // ReusedFreedBlocks: freed blocks of at least kReusedBlockMin bytes, by size, up to
  // kReusedBytesMax in all, and never more than the live tensors' bytes have fallen below their
  // highest since reuse began: the blocks kept take the process no higher than its tensors took it.
  void set_reuse(bool on) {
    const std::lock_guard<std::mutex> lock(reused_mutex_);
    reuse_ = on;
    live_high_ = current_.load();
    if (on) return;
    for (const auto& [size, block] : reused_) c10::free_cpu(block);
    reused_.clear();
    reused_bytes_ = 0;
  }

  int64_t kept_bytes() const {
    const std::lock_guard<std::mutex> lock(reused_mutex_);
    return kept_tensor_bytes();
  }

  static CountingCpuAllocator& instance() {
    static CountingCpuAllocator* allocator = new CountingCpuAllocator();  // never destroyed
    return *allocator;
  }

  mutable std::atomic<int64_t> current_{0};
  mutable std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> limit_{0};

 private:
  static constexpr size_t kReusedBlockMin = size_t{32} << 20;
  static constexpr size_t kReusedBytesMax = size_t{1} << 30;

  // A kept block of `size` bytes, or none; blocks kept beyond the live tensors' highest,
  // `live` now, let go.
  void* reused_block(size_t size, int64_t live) const {
    if (!reuse_.load()) return nullptr;
    const std::lock_guard<std::mutex> lock(reused_mutex_);
    live_high_ = std::max(live_high_, live);
    auto found = size >= kReusedBlockMin ? reused_.find(size) : reused_.end();
    if (found != reused_.end()) {
      void* block = found->second;
      reused_.erase(found);
      reused_bytes_ -= size;
      return block;
    }
    while (!reused_.empty() && live + kept_tensor_bytes() > live_high_) {
      const auto largest = std::prev(reused_.end());
      c10::free_cpu(largest->second);
      reused_bytes_ -= largest->first;
      reused_.erase(largest);
    }
    return nullptr;
  }

  bool keep_freed(void* block, size_t size) {
    if (size < kReusedBlockMin) return false;
    const std::lock_guard<std::mutex> lock(reused_mutex_);
    if (!reuse_ || reused_bytes_ + size > kReusedBytesMax ||
        current_.load() + kept_tensor_bytes() + static_cast<int64_t>(size - kHeader) > live_high_) {
      return false;
    }
    reused_.emplace(size, block);
    reused_bytes_ += size;
    return true;
  }

  // What the kept blocks held as tensors, headers aside: the live count's unit.
  int64_t kept_tensor_bytes() const {
    return static_cast<int64_t>(reused_bytes_ - kHeader * reused_.size());
  }

  mutable std::mutex reused_mutex_;
  mutable std::multimap<size_t, void*> reused_;
  mutable size_t reused_bytes_ = 0;
  mutable int64_t live_high_ = 0;
  std::atomic<bool> reuse_{false};
};

#if GPUBENCH_WITH_CUDA
c10::cuda::CUDACachingAllocator::DeviceStats cuda_stats(torch::Device device) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
}
#endif

}  // namespace

void track_cpu_tensors() {
  static std::once_flag installed;
  std::call_once(installed,
                 [] { c10::SetCPUAllocator(&CountingCpuAllocator::instance(), /*priority=*/100); });
}

ReusedFreedBlocks::ReusedFreedBlocks() {
  CountingCpuAllocator::instance().set_reuse(true);
}

ReusedFreedBlocks::~ReusedFreedBlocks() {
  CountingCpuAllocator::instance().set_reuse(false);
}

int64_t ReusedFreedBlocks::kept_bytes() {
  return CountingCpuAllocator::instance().kept_bytes();
}

void keep_freed_host_memory() {
#if defined(__GLIBC__)
  static std::once_flag set;
  std::call_once(set, [] {
    constexpr int kMmapThresholdMax = 32 << 20;  // glibc's DEFAULT_MMAP_THRESHOLD_MAX, 64-bit
    if (::mallopt(M_MMAP_THRESHOLD, kMmapThresholdMax) != 1 ||
        ::mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max()) != 1) {
      log::warn("glibc refused the malloc settings that keep freed tensor memory for reuse");
    }
  });
#endif
}

void trim_host_heap() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

int64_t allocated_bytes(torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) return cuda_stats(device).allocated_bytes[0].current;
#endif
  (void)device;
  return CountingCpuAllocator::instance().current_.load();
}

int64_t peak_allocated_bytes(torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) return cuda_stats(device).allocated_bytes[0].peak;
#endif
  (void)device;
  return CountingCpuAllocator::instance().peak_.load();
}

int64_t peak_reserved_bytes([[maybe_unused]] torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) return cuda_stats(device).reserved_bytes[0].peak;
#endif
  return 0;
}

void reset_peak(torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return;
  }
#endif
  (void)device;
  auto& allocator = CountingCpuAllocator::instance();
  allocator.peak_.store(allocator.current_.load());
}

void release_cached([[maybe_unused]] torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

std::string peak_source(torch::Device device) {
  return device.is_cuda() ? "cuda caching allocator, peak allocated bytes"
                          : "gpubench's counting CPU allocator, peak bytes of tensors";
}

std::string limit_caps(torch::Device device) {
  return device.is_cuda()
             ? "reserved bytes (the CUDA caching allocator's memory fraction: cached and "
               "fragmented blocks count)"
             : "tensor bytes (gpubench's counting CPU allocator)";
}

void set_limit(torch::Device device, int64_t bytes) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const auto total =
        static_cast<double>(at::cuda::getDeviceProperties(device.index())->totalGlobalMem);
    const double fraction = bytes > 0 ? std::min(1.0, static_cast<double>(bytes) / total) : 1.0;
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, device.index());
    return;
  }
#endif
  (void)device;
  CountingCpuAllocator::instance().limit_.store(bytes);
}

int64_t device_total_bytes([[maybe_unused]] torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) {
    return static_cast<int64_t>(at::cuda::getDeviceProperties(device.index())->totalGlobalMem);
  }
#endif
  return 0;
}

bool near_limit(torch::Device device, int64_t limit) {
  const int64_t bound = limit > 0 ? limit : device_total_bytes(device);
  if (bound <= 0) return false;
  const int64_t held =
      device.is_cuda() ? peak_reserved_bytes(device) : peak_allocated_bytes(device);
  return static_cast<double>(held) >= 0.9 * static_cast<double>(bound);
}

int64_t process_peak_rss_bytes() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace gpubench::tensor_memory
