// Suite files in JSON, as `gpubench run` reads them.
#include "fuzz_contract.h"
#include "settings/suite_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpubench::fuzz::expect_contract([&] { gpubench::parse_suite(text, "fuzz.json", true); });
  return 0;
}
