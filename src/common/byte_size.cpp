#include "common/byte_size.h"

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {

int64_t parse_byte_size(const std::string& text, const std::string& what) {
  const std::string allowed = "a byte count such as 8, 64K, 16M or 1G";
  if (text.empty()) throw UsageError(what + " is empty; expected " + allowed);
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw UsageError(what + " '" + echoed(text) + "' is not " + allowed);
  }
  const std::string suffix = text.substr(used);
  int64_t scale = 1;
  if (suffix == "K" || suffix == "k") {
    scale = 1LL << 10;
  } else if (suffix == "M" || suffix == "m") {
    scale = 1LL << 20;
  } else if (suffix == "G" || suffix == "g") {
    scale = 1LL << 30;
  } else if (!suffix.empty()) {
    throw UsageError(what + " '" + echoed(text) + "' is not " + allowed);
  }
  if (value <= 0) throw UsageError(what + " '" + echoed(text) + "' must be positive");
  if (value > (1LL << 40) / scale) {
    throw UsageError(what + " '" + echoed(text) + "' is above 1 TiB");
  }
  return value * scale;
}

}  // namespace gpubench
