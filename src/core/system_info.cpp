#include "gpubench/system_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
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
#include "gpubench/compat.h"

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
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
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
  info.gpubench_version = GPUBENCH_VERSION;
  info.git_commit = GPUBENCH_GIT_COMMIT;
#if GPUBENCH_WITH_CUDA
  if (torch::cuda::is_available()) {
    info.gpu_count = static_cast<int>(torch::cuda::device_count());
    for (int i = 0; i < info.gpu_count; ++i) {
      info.gpu_names.push_back(at::cuda::getDeviceProperties(i)->name);
    }
    info.gpu_name = info.gpu_names.empty() ? "" : info.gpu_names.front();
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

void to_json(nlohmann::json& j, const SystemInfo& i) {
  j = {{"hostname", i.hostname},
       {"os", i.os},
       {"cpu", i.cpu},
       {"cpu_logical_cores", i.cpu_logical_cores},
       {"gpu_name", i.gpu_name},
       {"gpu_names", i.gpu_names},
       {"gpu_count", i.gpu_count},
       {"driver", i.driver},
       {"cuda", i.cuda},
       {"cudnn", i.cudnn},
       {"nccl", i.nccl},
       {"gpu_interconnect", i.gpu_interconnect},
       {"libtorch", i.libtorch},
       {"libtorch_cuda", i.libtorch_cuda},
       {"blas", i.blas},
       {"tf32_matmul", i.tf32_matmul},
       {"tf32_cudnn", i.tf32_cudnn},
       {"cudnn_benchmark", i.cudnn_benchmark},
       {"gpubench_version", i.gpubench_version},
       {"git_commit", i.git_commit}};
}

void from_json(const nlohmann::json& j, SystemInfo& i) {
  i.hostname = j.value("hostname", "");
  i.os = j.value("os", "");
  i.cpu = j.value("cpu", "");
  i.cpu_logical_cores = j.value("cpu_logical_cores", 0);
  i.gpu_name = j.value("gpu_name", "");
  i.gpu_names = j.value("gpu_names", std::vector<std::string>{});
  i.gpu_count = j.value("gpu_count", 0);
  i.driver = j.value("driver", "");
  i.cuda = j.value("cuda", "");
  i.cudnn = j.value("cudnn", "");
  i.nccl = j.value("nccl", "");
  i.gpu_interconnect = j.value("gpu_interconnect", nlohmann::json::object()).get<GpuInterconnect>();
  i.libtorch = j.value("libtorch", "");
  i.libtorch_cuda = j.value("libtorch_cuda", false);
  i.blas = j.value("blas", "");
  i.tf32_matmul = j.value("tf32_matmul", false);
  i.tf32_cudnn = j.value("tf32_cudnn", false);
  i.cudnn_benchmark = j.value("cudnn_benchmark", false);
  i.gpubench_version = j.value("gpubench_version", "");
  i.git_commit = j.value("git_commit", "");
}

}  // namespace gpubench
