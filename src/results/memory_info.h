// Where a run's device memory went: the result's metrics.memory block, and the breakdown that
// `gpubench fit` predicts (docs/memory.md). Measuring it is memory/'s job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

// Bytes by what holds them at the peak. Weights, gradients and optimiser states are counted
// from the tensors; activations are what the forward pass left allocated for backward; other is
// the rest of the peak (temporaries of backward and of the optimiser step, workspaces), negative
// when not every gradient and activation is alive at the same moment.
struct MemoryBreakdown {
  int64_t weights = 0;  // parameters and buffers
  int64_t gradients = 0;
  int64_t optimizer_states = 0;  // SGD's momentum, AdamW's two moments and step counts
  int64_t activations = 0;
  int64_t other = 0;
  int64_t total() const { return weights + gradients + optimizer_states + activations + other; }
};

// The five keys, in bytes: {"weights": N, "gradients": N, ...}.
nlohmann::json breakdown_to_json(const MemoryBreakdown& breakdown);
MemoryBreakdown breakdown_from_json(const nlohmann::json& block);  // throws UsageError

// How a result's memory figures were obtained.
inline constexpr const char* kMemoryMeasured = "measured";
inline constexpr const char* kMemoryAtFailure = "at failure";
inline constexpr const char* kMemoryPlanned = "planned";

struct MemoryReport {
  // kMemoryMeasured: a run that trained; kMemoryAtFailure: the tensors alive when it ran out;
  // kMemoryPlanned: counted before the run, which was refused; empty: no figures.
  std::string basis;
  MemoryBreakdown breakdown;
  int64_t peak_bytes = 0;  // what the breakdown adds up to
  std::string peak_source;
  int64_t peak_reserved_bytes = 0;  // CUDA: the caching allocator's peak reserved bytes
  int64_t peak_rss_bytes = 0;       // CPU: the process's peak resident set (all of it)
  bool present() const { return !basis.empty(); }
};

nlohmann::json memory_to_json(const MemoryReport& report);
MemoryReport memory_from_json(const nlohmann::json& block);  // null: absent; throws UsageError

// `--batch-size max`: how the batch was found (docs/memory.md).
struct BatchProbe {
  int64_t batch = 0;
  std::string outcome;  // "ok", "oom" or "failed"
  int64_t peak_bytes = 0;
  std::string error;
  std::string oom_cause;  // outcome "oom": what failed to allocate
};

struct BatchSearchInfo {
  bool searched = false;
  int64_t memory_limit_bytes = 0;
  std::string memory_limit_source;  // "--memory-limit", "the GPU's total memory", ...
  std::string memory_limit_caps;    // what the limit caps on the device: reserved or tensor bytes
  int64_t predicted_batch = 0;      // fit's prediction the search started from
  int64_t found_batch = 0;          // 0: no batch trained
  std::vector<BatchProbe> probes;   // in the order they ran
};

nlohmann::json batch_search_to_json(const BatchSearchInfo& search);
BatchSearchInfo batch_search_from_json(const nlohmann::json& block);  // null: not searched

// "16.1 GiB", "512.0 MiB", "64.0 KiB"
std::string bytes_text(int64_t bytes);

}  // namespace gpubench
