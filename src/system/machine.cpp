#include "system/machine.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <torch/torch.h>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace gpubench {

std::string cpuinfo_field(const std::string& name) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);  // "model name\t: ..."
    if (key != name) continue;
    const auto value = line.find_first_not_of(" \t", colon + 1);
    return value == std::string::npos ? "" : line.substr(value);
  }
  return "";
}

bool cpu_has_flag(const std::string& flag) {
  std::istringstream words(cpuinfo_field("flags"));
  for (std::string word; words >> word;) {
    if (word == flag) return true;
  }
  return false;
}

std::string compute_capability_text(int capability) {
  return std::to_string(capability / 10) + "." + std::to_string(capability % 10);
}

MachineFacts read_machine_facts(int local_ranks) {
  MachineFacts facts;
  facts.cuda_available = torch::cuda::is_available();
  facts.cuda_device_count =
      facts.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  facts.cpu_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  facts.local_ranks = local_ranks;
#if GPUBENCH_WITH_CUDA
  if (facts.cuda_device_count > 0) {
    const auto* properties = at::cuda::getDeviceProperties(0);
    facts.cuda_device_name = properties->name;
    facts.cuda_compute_capability = properties->major * 10 + properties->minor;
  }
#endif
  return facts;
}

}  // namespace gpubench
