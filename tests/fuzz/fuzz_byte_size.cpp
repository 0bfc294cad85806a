// Byte-size options (`allreduce --min-bytes 64K`).
#include "common/byte_size.h"
#include "fuzz_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpubench::fuzz::expect_contract([&] {
    const int64_t bytes = gpubench::parse_byte_size(text, "--min-bytes");
    if (bytes < 1 || bytes > (int64_t{1} << 40)) gpubench::fuzz::broken("size out of range", text);
  });
  return 0;
}
