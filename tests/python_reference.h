// The detection models' references in Python (scripts/ssd300_reference.py,
// scripts/maskrcnn_reference.py), run by the interpreter whose torch is the LibTorch gpubench
// links (GPUBENCH_REFERENCE_PYTHON): their fixture file read back, and their state dict loaded
// into gpubench's model by name.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::testing {

// `scripts/<script> fixture FILE`, then FILE through torch::pickle_load; nullopt (a failure
// recorded) where the script fails.
inline std::optional<c10::impl::GenericDict> python_reference_fixture(const std::string& script) {
  const std::string path = ::testing::TempDir() + "/" + script + ".pt";
  const std::string command = std::string(GPUBENCH_REFERENCE_PYTHON) + " " + GPUBENCH_SOURCE_DIR +
                              "/scripts/" + script + " fixture " + path;
  const int status = std::system(command.c_str());
  if (status != 0) {
    ADD_FAILURE() << command << " exited " << status
                  << ": the reference needs torch and torchvision for the LibTorch gpubench links "
                     "(scripts/setup.sh installs python3-torchvision; scripts/check-torch2.sh "
                     "the torchvision wheel)";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  std::remove(path.c_str());
  return torch::pickle_load(bytes).toGenericDict();
}

// Every tensor of `state` (name -> tensor) into the parameter or buffer of that name; each of
// the module's is loaded.
inline void load_state_by_name(torch::nn::Module& module, const c10::impl::GenericDict& state) {
  torch::NoGradGuard no_grad;
  auto parameters = module.named_parameters();
  auto buffers = module.named_buffers();
  size_t loaded = 0;
  for (const auto& item : state) {
    const std::string name = item.key().toStringRef();
    torch::Tensor* target =
        parameters.find(name) != nullptr ? parameters.find(name) : buffers.find(name);
    ASSERT_NE(target, nullptr) << name << " is not in gpubench's model";
    ASSERT_EQ(target->sizes(), item.value().toTensor().sizes()) << name;
    target->copy_(item.value().toTensor());
    ++loaded;
  }
  EXPECT_EQ(loaded, parameters.size() + buffers.size());
}

}  // namespace gpubench::testing
