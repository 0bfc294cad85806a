#include "results/system_info.h"

namespace gpubench {

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
  interconnect.source = j.value("source", "");
  interconnect.links.clear();
  for (const auto& entry : j.value("links", nlohmann::json::array())) {
    GpuLink link;
    const auto gpus = entry.value("gpus", std::vector<int>{0, 0});
    link.first = gpus.size() > 0 ? gpus[0] : 0;
    link.second = gpus.size() > 1 ? gpus[1] : 0;
    link.code = entry.value("link", "");
    link.description = entry.value("description", "");
    link.peer_known = entry.contains("peer_access");
    link.peer_access = entry.value("peer_access", false);
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
