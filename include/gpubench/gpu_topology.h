// How each pair of GPUs is connected, as the driver tells it (`nvidia-smi topo -m`), and whether
// CUDA peer-to-peer access works between them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

struct GpuLink {
  int first = 0;
  int second = 0;
  std::string code;          // nvidia-smi's code: NV18, PIX, PXB, PHB, NODE, SYS
  std::string description;   // "NVLink x18", "PCIe through one switch", ...
  bool peer_access = false;  // cudaDeviceCanAccessPeer, both ways
  bool peer_known = false;   // false where CUDA could not be asked
};

struct GpuInterconnect {
  std::vector<GpuLink> links;  // one per pair, first < second
  std::string source;          // what the links were read from, or why there are none
};

// Parses the GPU-to-GPU block of `nvidia-smi topo -m` output.
std::vector<GpuLink> parse_nvidia_smi_topology(const std::string& text);
std::string describe_link_code(const std::string& code);

// Reads this machine's interconnect (nvidia-smi, then CUDA peer access when built with CUDA).
GpuInterconnect read_gpu_interconnect(int gpu_count);

void to_json(nlohmann::json& j, const GpuInterconnect& interconnect);
void from_json(const nlohmann::json& j, GpuInterconnect& interconnect);

}  // namespace gpubench
