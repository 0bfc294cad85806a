#include "torch_support/libtorch_location.h"

#include <dlfcn.h>

#include <filesystem>

#include <ATen/ops/empty_ops.h>

namespace gpubench::compat {

// An operator's entry point is defined in libtorch_cpu and never inline (c10::Dispatcher::singleton
// is inline in 2.x: its address is in the caller's own binary).
std::string libtorch_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&at::_ops::empty_memory_format::call), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  return std::filesystem::weakly_canonical(std::filesystem::path(info.dli_fname))
      .parent_path()
      .string();
}

}  // namespace gpubench::compat
