// Result selectors (`compare 'gpu="NVIDIA A40",gpus=1' ...`).
#include "fuzz_contract.h"
#include "results/result_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpubench::fuzz::expect_contract([&] {
    const auto selector = gpubench::ResultSelector::parse(text);
    (void)selector.matches(gpubench::Result{});
  });
  return 0;
}
