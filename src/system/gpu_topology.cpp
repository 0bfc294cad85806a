#include "system/gpu_topology.h"

#include <cstdio>
#include <sstream>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace gpubench {
namespace {

std::vector<std::string> split_whitespace(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool is_gpu_label(const std::string& word) {
  return word.size() > 3 && word.rfind("GPU", 0) == 0 &&
         word.find_first_not_of("0123456789", 3) == std::string::npos;
}

std::string run_and_capture(const std::string& command) {
  std::string output;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  ::pclose(pipe);
  return output;
}

}  // namespace

std::string describe_link_code(const std::string& code) {
  if (code.rfind("NV", 0) == 0 && code.size() > 2) return "NVLink x" + code.substr(2);
  if (code == "PIX") return "PCIe through at most one switch";
  if (code == "PXB") return "PCIe through several switches, no host bridge";
  if (code == "PHB") return "PCIe through a host bridge";
  if (code == "NODE") return "PCIe across host bridges within a NUMA node";
  if (code == "SYS") return "PCIe and the inter-socket link (across NUMA nodes)";
  return "unknown (" + code + ")";
}

std::vector<GpuLink> parse_nvidia_smi_topology(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> columns;
  std::vector<GpuLink> links;
  for (std::string line; std::getline(in, line);) {
    // nvidia-smi colours the header with escape codes on a terminal; strip them.
    std::string clean;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b') {
        while (i < line.size() && line[i] != 'm') ++i;
        continue;
      }
      clean += line[i];
    }
    const auto words = split_whitespace(clean);
    if (words.empty()) continue;
    if (columns.empty()) {
      if (is_gpu_label(words.front())) {
        columns.assign(words.begin(), words.end());
        while (!columns.empty() && !is_gpu_label(columns.back())) columns.pop_back();
      }
      continue;
    }
    if (!is_gpu_label(words.front())) {
      if (!links.empty()) break;  // past the GPU rows
      continue;
    }
    const int row = std::stoi(words.front().substr(3));
    for (size_t c = 0; c < columns.size() && c + 1 < words.size(); ++c) {
      const int column = std::stoi(columns[c].substr(3));
      if (column <= row) continue;
      const std::string& code = words[c + 1];
      links.push_back({row, column, code, describe_link_code(code), false, false});
    }
  }
  return links;
}

GpuInterconnect read_gpu_interconnect(int gpu_count) {
  GpuInterconnect interconnect;
  if (gpu_count < 2) {
    interconnect.source = gpu_count == 1 ? "one GPU: no GPU pairs" : "no GPU";
    return interconnect;
  }
  interconnect.links = parse_nvidia_smi_topology(run_and_capture("nvidia-smi topo -m 2>/dev/null"));
  interconnect.source =
      interconnect.links.empty() ? "nvidia-smi topo -m unavailable" : "nvidia-smi topo -m";
#if GPUBENCH_WITH_CUDA
  if (interconnect.links.empty()) {
    for (int a = 0; a < gpu_count; ++a) {
      for (int b = a + 1; b < gpu_count; ++b)
        interconnect.links.push_back({a, b, "", "", false, false});
    }
  }
  for (auto& link : interconnect.links) {
    try {
      link.peer_access = at::cuda::canDeviceAccessPeer(link.first, link.second) &&
                         at::cuda::canDeviceAccessPeer(link.second, link.first);
      link.peer_known = true;
    } catch (const std::exception&) {
      // A device nvidia-smi lists but this process cannot see (CUDA_VISIBLE_DEVICES).
    }
  }
  interconnect.source += "; peer access from cudaDeviceCanAccessPeer";
#endif
  return interconnect;
}

}  // namespace gpubench
