#include "results/system_info.h"

#include "common/json_fields.h"

namespace gpubench {
namespace {

// More GPUs than any machine has; a larger count in a result file is refused.
constexpr int64_t kMaxGpuIndex = 1 << 16;

}  // namespace

void to_json(nlohmann::json& j, const GpuInterconnect& interconnect) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& link : interconnect.links) {
    nlohmann::json entry = {{"gpus", {link.first, link.second}},
                            {"link", link.code},
                            {"description", link.description}};
    if (link.peer_known) entry["peer_access"] = link.peer_access;
    links.push_back(entry);
  }
  j = {{"links", links}, {"source", interconnect.source}};
}

void from_json(const nlohmann::json& j, GpuInterconnect& interconnect) {
  const JsonFields fields(j, "system.gpu_interconnect");
  interconnect.source = fields.text("source");
  interconnect.links.clear();
  for (const JsonFields& entry : fields.objects("links")) {
    GpuLink link;
    const auto gpus = entry.integers("gpus", 0, kMaxGpuIndex);
    link.first = gpus.size() > 0 ? static_cast<int>(gpus[0]) : 0;
    link.second = gpus.size() > 1 ? static_cast<int>(gpus[1]) : 0;
    link.code = entry.text("link");
    link.description = entry.text("description");
    link.peer_known = entry.has("peer_access");
    link.peer_access = entry.flag("peer_access");
    interconnect.links.push_back(link);
  }
}

void to_json(nlohmann::json& j, const SystemInfo& i) {
  j = {{"hostname", i.hostname},
       {"os", i.os},
       {"cpu", i.cpu},
       {"cpu_logical_cores", i.cpu_logical_cores},
       {"gpu_name", i.gpu_name},
       {"gpu_names", i.gpu_names},
       {"gpu_count", i.gpu_count},
       {"gpu_memory_bytes", i.gpu_memory_bytes},
       {"gpu_pci_bus_id", i.gpu_pci_bus_id},
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
       {"cudnn_deterministic", i.cudnn_deterministic},
       {"gpubench_version", i.gpubench_version},
       {"git_commit", i.git_commit}};
}

void from_json(const nlohmann::json& j, SystemInfo& i) {
  const JsonFields fields(j, "system");
  i.hostname = fields.text("hostname");
  i.os = fields.text("os");
  i.cpu = fields.text("cpu");
  i.cpu_logical_cores = static_cast<int>(fields.integer("cpu_logical_cores", 0, 0, 1 << 20));
  i.gpu_name = fields.text("gpu_name");
  i.gpu_names = fields.texts("gpu_names");
  i.gpu_count = static_cast<int>(fields.integer("gpu_count", 0, 0, kMaxGpuIndex));
  i.gpu_memory_bytes = fields.integer("gpu_memory_bytes");
  i.gpu_pci_bus_id = fields.text("gpu_pci_bus_id");
  i.driver = fields.text("driver");
  i.cuda = fields.text("cuda");
  i.cudnn = fields.text("cudnn");
  i.nccl = fields.text("nccl");
  i.gpu_interconnect = fields.raw("gpu_interconnect").get<GpuInterconnect>();  // null: empty
  i.libtorch = fields.text("libtorch");
  i.libtorch_cuda = fields.flag("libtorch_cuda");
  i.blas = fields.text("blas");
  i.tf32_matmul = fields.flag("tf32_matmul");
  i.tf32_cudnn = fields.flag("tf32_cudnn");
  i.cudnn_benchmark = fields.flag("cudnn_benchmark");
  i.cudnn_deterministic = fields.flag("cudnn_deterministic");
  i.gpubench_version = fields.text("gpubench_version");
  i.git_commit = fields.text("git_commit");
}

}  // namespace gpubench
