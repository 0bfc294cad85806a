#include "torch_support/vision_ops.h"

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>

#include "common/errors.h"
#include "torch_support/libtorch_location.h"

namespace gpubench::vision_ops {
namespace {

namespace fs = std::filesystem;

struct Loaded {
  std::string path;   // the _C loaded; empty where none was
  std::string error;  // why not
};

// torchvision's _C*.so files in `folder`.
std::vector<fs::path> extensions_in(const fs::path& folder) {
  std::vector<fs::path> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const bool shared_object = name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0;
    if (shared_object && name.rfind("_C.", 0) == 0) {
      found.push_back(entry.path());
    }
  }
  return found;
}

// The torchvision folder that belongs to the LibTorch in `torch_lib`: a wheel's beside its torch
// package, Debian's in dist-packages.
std::vector<fs::path> candidate_extensions(const fs::path& torch_lib) {
  if (torch_lib.filename() == "lib" && torch_lib.parent_path().filename() == "torch") {
    return extensions_in(torch_lib.parent_path().parent_path() / "torchvision");
  }
  // Debian's python3-torchvision belongs to Debian's LibTorch only: another LibTorch in a
  // system folder would crash on its registrations.
  const std::string folder = torch_lib.string();
  if (folder.rfind("/usr/lib/", 0) == 0 || folder.rfind("/lib/", 0) == 0) {
    return extensions_in("/usr/lib/python3/dist-packages/torchvision");
  }
  return {};
}

bool file_mentions(const fs::path& file, const std::string& text) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  return bytes.find(text) != std::string::npos;
}

// libpython3.X for a wheel in <prefix>/lib/python3.X/site-packages: the prefix's own (a Python
// built with a shared library), the interpreter's that a virtual environment names in
// pyvenv.cfg, or the system's.
std::vector<std::string> python_libraries(const fs::path& site_packages) {
  const fs::path version_folder = site_packages.parent_path();  // lib/python3.X
  const std::string library = "lib" + version_folder.filename().string() + ".so.1.0";
  const fs::path prefix = version_folder.parent_path().parent_path();
  std::vector<std::string> candidates = {(prefix / "lib" / library).string()};
  std::ifstream config(prefix / "pyvenv.cfg");
  std::string line;
  const std::regex home(R"(^\s*home\s*=\s*(.*\S)\s*$)");
  std::smatch match;
  while (std::getline(config, line)) {
    if (std::regex_match(line, match, home)) {
      candidates.push_back((fs::path(match[1].str()).parent_path() / "lib" / library).string());
    }
  }
  candidates.push_back(library);
  return candidates;
}

// A wheel's _C links libtorch_python.so, which needs the interpreter's symbols: both opened
// global first, the torch package's own libtorch_python (the system may hold another).
std::string open_python_side(const fs::path& extension, const fs::path& torch_lib) {
  if (!file_mentions(extension, "libtorch_python.so")) return "";
  bool python = false;
  for (const std::string& candidate : python_libraries(extension.parent_path().parent_path())) {
    if (dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) {
      python = true;
      break;
    }
  }
  if (!python) return "no libpython for " + extension.string() + "'s libtorch_python.so";
  const fs::path torch_python = torch_lib / "libtorch_python.so";
  if (dlopen(torch_python.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    return std::string(dlerror());
  }
  return "";
}

Loaded load() {
  Loaded loaded;
  const fs::path torch_lib = compat::libtorch_folder();
  const std::vector<fs::path> candidates = candidate_extensions(torch_lib);
  if (candidates.empty()) {
    loaded.error = "no torchvision beside the LibTorch in " + torch_lib.string();
    return loaded;
  }
  for (const fs::path& extension : candidates) {
    const std::string python_error = open_python_side(extension, torch_lib);
    if (!python_error.empty()) {
      loaded.error = python_error;
      continue;
    }
    if (dlopen(extension.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
      loaded.error = std::string(dlerror());
      continue;
    }
    if (!c10::Dispatcher::singleton().findSchema({"torchvision::nms", ""}).has_value()) {
      loaded.error = extension.string() + " registered no torchvision::nms";
      continue;
    }
    loaded.path = extension.string();
    loaded.error.clear();
    return loaded;
  }
  return loaded;
}

const Loaded& loaded_once() {
  static const Loaded loaded = load();
  return loaded;
}

std::vector<c10::IValue> call(const char* name, std::vector<c10::IValue> stack) {
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
  op.callBoxed(&stack);
  return stack;
}

}  // namespace

const std::string& require(const std::string& for_what) {
  const Loaded& loaded = loaded_once();
  if (loaded.path.empty()) {
    throw Unavailable(requirement::kTorchvisionOps,
                      for_what +
                          " needs torchvision's operators (nms, roi_align) for the LibTorch it "
                          "runs on: install python3-torchvision (Debian's LibTorch) or the "
                          "torchvision wheel beside the torch wheel (" +
                          loaded.error + ")");
  }
  return loaded.path;
}

// Both in float32, as torchvision's autocast kernels run them on CUDA under fp16 and bf16 (they
// cast the inputs and return the input's dtype): its CPU kernels have no bfloat16, so a bf16
// run on the CPU would fail where a GPU's passes. A float32 input is not copied.
torch::Tensor nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_threshold) {
  require("nms");
  return call("torchvision::nms",
              {boxes.to(torch::kFloat), scores.to(torch::kFloat), iou_threshold})
      .at(0)
      .toTensor();
}

torch::Tensor roi_align(const torch::Tensor& input, const torch::Tensor& rois, double spatial_scale,
                        int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                        bool aligned) {
  require("roi_align");
  return call("torchvision::roi_align",
              {input.to(torch::kFloat), rois.to(torch::kFloat), spatial_scale, pooled_height,
               pooled_width, sampling_ratio, aligned})
      .at(0)
      .toTensor()
      .to(input.scalar_type());
}

}  // namespace gpubench::vision_ops
