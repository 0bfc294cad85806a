// The environment a result was measured in: the "system" block of a result file. Reading it
// from the machine is system/'s job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

// How each pair of GPUs is connected, as the driver tells it (`nvidia-smi topo -m`), and whether
// CUDA peer-to-peer access works between them.
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

struct SystemInfo {
  std::string hostname;
  std::string os;
  std::string cpu;
  int cpu_logical_cores = 0;
  std::string gpu_name;                // the first device's name; empty without CUDA
  std::vector<std::string> gpu_names;  // every visible device
  int gpu_count = 0;
  int64_t gpu_memory_bytes = 0;  // the first device's total memory
  std::string gpu_pci_bus_id;    // the first device's, as CUDA reports it
  std::string driver;            // NVIDIA kernel driver version
  std::string cuda;              // CUDA runtime version LibTorch was built with
  std::string cudnn;
  std::string nccl;
  GpuInterconnect gpu_interconnect;  // every GPU pair on this machine
  std::string libtorch;
  bool libtorch_cuda = false;  // whether this LibTorch build has CUDA at all
  std::string blas;            // how LibTorch does CPU matrix products
  // A STREAM-style copy's bytes read and written per second, measured by runs that need it (text
  // generation on the CPU: its decode ceiling); 0 where not measured. No datasheet lists a VM's.
  double cpu_memory_bandwidth_gbs = 0;
  bool tf32_matmul = false;
  bool tf32_cudnn = false;
  bool cudnn_benchmark = false;  // cuDNN algorithm autotuning
  bool cudnn_deterministic = false;
  std::string gpubench_version;
  std::string git_commit;
};

void to_json(nlohmann::json& j, const GpuInterconnect& interconnect);
void from_json(const nlohmann::json& j, GpuInterconnect& interconnect);
void to_json(nlohmann::json& j, const SystemInfo& info);
void from_json(const nlohmann::json& j, SystemInfo& info);

}  // namespace gpubench
