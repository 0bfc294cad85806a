#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpubench/errors.h"  // UsageError: bad input from the user, exit code 2

namespace gpubench {

// What a benchmark can need that a machine or a build may lack (docs/results.md#skipped).
namespace requirement {
inline constexpr const char* kCuda = "cuda";                            // a CUDA device
inline constexpr const char* kFp8TensorCores = "fp8-tensor-cores";      // compute capability 8.9+
inline constexpr const char* kLibtorchFp8 = "libtorch-fp8";             // LibTorch 2.5+
inline constexpr const char* kLibtorchCpuFp8 = "libtorch-cpu-fp8";      // _scaled_mm on the CPU
inline constexpr const char* kLibtorchGraphs = "libtorch-cuda-graphs";  // 2.4+ with CUDA
inline constexpr const char* kLibtorchIntWeights = "libtorch-int-weights";  // 2.6+
inline constexpr const char* kInt4Kernel = "int4-kernel";  // CUDA: compute capability 8.0+
// torchvision's _C beside the LibTorch in use (torch_support/vision_ops.h)
inline constexpr const char* kTorchvisionOps = "torchvision-ops";
}  // namespace requirement

// A well-formed benchmark that this machine or this build cannot run (no CUDA device, no FP8
// tensor cores, a LibTorch without FP8): bad input to a command like any UsageError, which a
// suite run with --skip-unavailable records instead as a skipped result naming `requirement`.
class Unavailable : public UsageError {
 public:
  Unavailable(std::string requirement, const std::string& message)
      : UsageError(message), requirement_(std::move(requirement)) {}
  const std::string& requirement() const { return requirement_; }

 private:
  std::string requirement_;
};

// Why a benchmark's setting cannot run, if it cannot. `requirement`: what this machine or build
// lacks (requirement::k...); empty where the input itself is at fault.
struct Refusal {
  Refusal() = default;
  Refusal(std::string message, std::string requirement = "")  // NOLINT: returned as {"why"}
      : message(std::move(message)), requirement(std::move(requirement)) {}
  std::string message;
  std::string requirement;
  bool refused() const { return !message.empty(); }
  // Throws Unavailable where a requirement is named, else UsageError; nothing if not refused.
  void raise_if_refused() const;
};

// SIGINT or SIGTERM arrived while gpubench waited for its children (which it has then told to
// stop): thrown so that destructors clean up; the top level then ends the process by the same
// signal.
class Interrupted : public std::exception {
 public:
  explicit Interrupted(int signal_number) : signal_number_(signal_number) {}
  int signal_number() const { return signal_number_; }
  const char* what() const noexcept override { return "interrupted"; }

 private:
  int signal_number_;
};

// Throws Interrupted when SIGINT or SIGTERM arrived since the handler was installed
// (launcher/child_process.h installs it with the first child); a no-op otherwise.
void throw_if_interrupted();
// Marks the signal as arrived; the handler calls it (async-signal-safe).
void note_interruption(int signal_number);

// UsageError "<name> must be a positive integer, got <value>" unless value > 0.
void require_positive(int64_t value, const std::string& name);

// The text up to its first line break: a LibTorch error carries a C++ backtrace after it.
std::string first_line(const std::string& text);

// "a, b, c" for error messages that list the allowed values.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace gpubench
