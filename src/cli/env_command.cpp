// gpubench env: the LibTorch in use and the GPUs it sees, then the system block a result would
// record (--format json: the block alone, for scripts).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "results/system_info.h"
#include "system/libtorch_runtime.h"
#include "system/system_probe.h"

namespace gpubench::cli {
namespace {

std::string libtorch_line(const SystemInfo& system) {
  const std::string cuda = libtorch_cuda_version();
  const std::string folder = libtorch_folder();
  return "libtorch: " + system.libtorch + (cuda.empty() ? ", CPU only" : ", with CUDA " + cuda) +
         (folder.empty() ? "" : ", from " + folder);
}

// "4 x NVIDIA A40" where the devices are alike, else their names in order.
std::string gpus_line(const SystemInfo& system) {
  const std::string why_not = why_no_cuda_device();
  if (!why_not.empty() || system.gpu_count == 0) {
    return "gpus: none usable: " + (why_not.empty() ? "no CUDA device" : why_not);
  }
  bool alike = true;
  for (const std::string& name : system.gpu_names) alike = alike && name == system.gpu_name;
  std::string devices = std::to_string(system.gpu_count) + " x " + system.gpu_name;
  if (!alike) {
    devices = std::to_string(system.gpu_count) + ":";
    for (const std::string& name : system.gpu_names) devices += " " + name + ",";
    devices.pop_back();
  }
  return "gpus: " + devices + (system.driver.empty() ? "" : " (driver " + system.driver + ")");
}

// The tf32 and cuDNN flags below are what this process starts with; a run sets them for its
// precision (TF32 on for matmuls and cuDNN with precision tf32 alone) and records those it ran
// with.
constexpr const char* kSystemBlockHeading =
    "system block, as a result records it (its tf32_* and cudnn_* flags are LibTorch's defaults "
    "here; each run sets them for its precision and records its own):";

}  // namespace

void add_env_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("env", torch_command_description("env"));
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("--format,-f", *format,
                  "text: the LibTorch and GPUs in use, then the system block; json: the system "
                  "block alone")
      ->capture_default_str();
  cmd->callback([&exit_code, format] {
    if (*format != "text" && *format != "json") {
      throw UsageError("--format '" + echoed(*format) + "' is not one of text, json");
    }
    const SystemInfo system = collect_system_info();
    if (*format == "text") {
      std::printf("%s\n%s\n\n%s\n", libtorch_line(system).c_str(), gpus_line(system).c_str(),
                  kSystemBlockHeading);
    }
    std::printf("%s\n", json_text(nlohmann::json(system)).c_str());
    exit_code = kExitOk;
  });
}

}  // namespace gpubench::cli
