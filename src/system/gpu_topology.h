// Reads how the GPUs of this machine are connected (`nvidia-smi topo -m`, CUDA peer access).
#pragma once

#include <string>
#include <vector>

#include "results/system_info.h"

namespace gpubench {

// Parses the GPU-to-GPU block of `nvidia-smi topo -m` output.
std::vector<GpuLink> parse_nvidia_smi_topology(const std::string& text);
std::string describe_link_code(const std::string& code);

// Reads this machine's interconnect (nvidia-smi, then CUDA peer access when built with CUDA).
GpuInterconnect read_gpu_interconnect(int gpu_count);

}  // namespace gpubench
