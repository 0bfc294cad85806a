#include "system/system_probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/torch.h>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <torch/csrc/cuda/nccl.h>
#endif

#include "gpubench/build_info.h"
#include "system/gpu_topology.h"
#include "system/machine.h"
#include "torch_support/compat.h"

namespace gpubench {
std::string read_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// The first dotted number after "Kernel Module": the proprietary driver writes
// "... Kernel Module  550.54.15  ...", the open one "... Open Kernel Module for x86_64  580.159.04
// ...".
std::string parse_nvidia_driver_version(const std::string& proc_line) {
  const auto at = proc_line.find("Kernel Module");
  if (at == std::string::npos) return "";
  std::istringstream words(proc_line.substr(at));
  std::string word;
  while (words >> word) {
    const bool dotted = word.find('.') != std::string::npos &&
                        std::isdigit(static_cast<unsigned char>(word.front())) &&
                        word.find_first_not_of("0123456789.") == std::string::npos;
    if (dotted) return word;
  }
  return "";
}

namespace {

std::string read_os() {
  struct utsname info {};
  if (::uname(&info) != 0) return "unknown";
  return std::string(info.sysname) + " " + info.release + " " + info.machine;
}

std::string read_cpu_model() {
  const std::string model = cpuinfo_field("model name");
  return model.empty() ? "unknown" : model;
}

[[maybe_unused]] std::string read_nvidia_driver() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  return parse_nvidia_driver_version(line);
}

// The BLAS library actually mapped into this process, which decides CPU matmul speed.
std::string read_loaded_blas() {
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    for (const char* name : {"openblas", "libmkl", "libblas", "libblis"}) {
      if (line.find(name) != std::string::npos) return line.substr(line.find('/'));
    }
  }
  return at::globalContext().hasMKL() ? "MKL (static)" : "none found";
}

[[maybe_unused]] std::string version_from_code(long code, long major_div, long minor_div) {
  return std::to_string(code / major_div) + "." + std::to_string((code % major_div) / minor_div) +
         "." + std::to_string(code % minor_div);
}

}  // namespace

std::string cuda_pci_bus_id(int index) {
#if GPUBENCH_WITH_CUDA
  const auto* properties = at::cuda::getDeviceProperties(index);
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.0", properties->pciDomainID,
                properties->pciBusID, properties->pciDeviceID);
  return text;
#else
  (void)index;
  return "";
#endif
}

SystemInfo collect_system_info() {
  SystemInfo info;
  info.hostname = read_hostname();
  info.os = read_os();
  info.cpu = read_cpu_model();
  info.cpu_logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  info.libtorch = compat::libtorch_version();
  info.libtorch_cuda = GPUBENCH_WITH_CUDA != 0;
  info.blas = read_loaded_blas();
  info.tf32_matmul = compat::tf32_matmul_enabled();
  info.tf32_cudnn = compat::tf32_cudnn_enabled();
  info.cudnn_benchmark = at::globalContext().benchmarkCuDNN();
  info.cudnn_deterministic = at::globalContext().deterministicCuDNN();
  info.gpubench_version = GPUBENCH_VERSION;
  info.git_commit = GPUBENCH_GIT_COMMIT;
#if GPUBENCH_WITH_CUDA
  if (const MachineFacts machine = read_machine_facts(); machine.cuda_available) {
    info.gpu_count = machine.cuda_device_count;
    for (int i = 0; i < info.gpu_count; ++i) {
      info.gpu_names.push_back(at::cuda::getDeviceProperties(i)->name);
    }
    info.gpu_name = info.gpu_names.empty() ? "" : info.gpu_names.front();
    if (info.gpu_count > 0) {
      info.gpu_memory_bytes =
          static_cast<int64_t>(at::cuda::getDeviceProperties(0)->totalGlobalMem);
      info.gpu_pci_bus_id = cuda_pci_bus_id(0);
    }
    info.driver = read_nvidia_driver();
    info.cuda = version_from_code(at::detail::getCUDAHooks().versionCUDART(), 1000, 10);
    if (at::detail::getCUDAHooks().hasCuDNN()) {
      // cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 major*1000 + minor*100 + patch.
      const long cudnn = at::detail::getCUDAHooks().versionCuDNN();
      info.cudnn = cudnn >= 90000 ? version_from_code(cudnn, 10000, 100)
                                  : version_from_code(cudnn, 1000, 100);
    }
    const uint64_t nccl = torch::cuda::nccl::version();
    info.gpu_interconnect = read_gpu_interconnect(info.gpu_count);
    info.nccl = std::to_string(nccl >> 32) + "." + std::to_string((nccl >> 16) & 0xffff) + "." +
                std::to_string(nccl & 0xffff);
  }
#endif
  if (info.gpu_count == 0) info.gpu_interconnect.source = "no GPU";
  return info;
}

}  // namespace gpubench
