#include "results/system_info.h"

#include "common/json_fields.h"
#include "results/json_block.h"

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

namespace {

GpuInterconnect interconnect_from(const JsonFields& fields, const std::string& key) {
  return fields.raw(key).get<GpuInterconnect>();  // null: empty
}

nlohmann::json interconnect_to_json(const GpuInterconnect& interconnect) {
  return interconnect;
}

template <typename Io, typename S>
void system_fields(Io& io, S& i) {
  io.text("hostname", i.hostname);
  io.text("os", i.os);
  io.text("cpu", i.cpu);
  io.integer("cpu_logical_cores", i.cpu_logical_cores, 0, 0, 1 << 20);
  io.text("gpu_name", i.gpu_name);
  io.texts("gpu_names", i.gpu_names);
  io.integer("gpu_count", i.gpu_count, 0, 0, kMaxGpuIndex);
  io.integer("gpu_memory_bytes", i.gpu_memory_bytes);
  io.text("gpu_pci_bus_id", i.gpu_pci_bus_id);
  io.text("driver", i.driver);
  io.text("cuda", i.cuda);
  io.text("cudnn", i.cudnn);
  io.text("nccl", i.nccl);
  io.custom("gpu_interconnect", i.gpu_interconnect, interconnect_from, interconnect_to_json);
  io.text("libtorch", i.libtorch);
  io.flag("libtorch_cuda", i.libtorch_cuda);
  io.text("blas", i.blas);
  io.number("cpu_memory_bandwidth_gbs", i.cpu_memory_bandwidth_gbs, 0, 1e9, Written::kWhenPositive);
  io.flag("tf32_matmul", i.tf32_matmul);
  io.flag("tf32_cudnn", i.tf32_cudnn);
  io.flag("cudnn_benchmark", i.cudnn_benchmark);
  io.flag("cudnn_deterministic", i.cudnn_deterministic);
  io.text("gpubench_version", i.gpubench_version);
  io.text("git_commit", i.git_commit);
}

}  // namespace

void to_json(nlohmann::json& j, const SystemInfo& i) {
  j = write_block(system_fields<BlockWriter, const SystemInfo>, i);
}

void from_json(const nlohmann::json& j, SystemInfo& i) {
  read_block(JsonFields(j, "system"), system_fields<BlockReader, SystemInfo>, i);
}

}  // namespace gpubench
