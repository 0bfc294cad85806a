// The environment a result was measured in: the "system" block of a result file.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpubench/gpu_topology.h"

namespace gpubench {

struct SystemInfo {
  std::string hostname;
  std::string os;
  std::string cpu;
  int cpu_logical_cores = 0;
  std::string gpu_name;                // the first device's name; empty without CUDA
  std::vector<std::string> gpu_names;  // every visible device
  int gpu_count = 0;
  std::string driver;  // NVIDIA kernel driver version
  std::string cuda;    // CUDA runtime version LibTorch was built with
  std::string cudnn;
  std::string nccl;
  GpuInterconnect gpu_interconnect;  // every GPU pair on this machine
  std::string libtorch;
  bool libtorch_cuda = false;  // whether this LibTorch build has CUDA at all
  std::string blas;            // how LibTorch does CPU matrix products
  bool tf32_matmul = false;
  bool tf32_cudnn = false;
  bool cudnn_benchmark = false;  // cuDNN algorithm autotuning
  std::string gpubench_version;
  std::string git_commit;
};

// This machine's host name ("unknown" when it cannot be read).
std::string read_hostname();

// The driver version in a line of /proc/driver/nvidia/version; empty if it has none.
std::string parse_nvidia_driver_version(const std::string& proc_line);

// Reads the machine now, including the TF32 flags currently in force.
SystemInfo collect_system_info();

void to_json(nlohmann::json& j, const SystemInfo& info);
void from_json(const nlohmann::json& j, SystemInfo& info);

}  // namespace gpubench
