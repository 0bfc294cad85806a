#include "common/byte_size.h"

#include <utility>

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {

int64_t parse_byte_size(const std::string& text, const std::string& what, int64_t least) {
  const std::string allowed = "a byte count such as 8, 64K, 16M, 1G, 48GB or 80GiB";
  if (text.empty()) throw UsageError(what + " is empty; expected " + allowed);
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw UsageError(what + " '" + echoed(text) + "' is not " + allowed);
  }
  const std::string suffix = text.substr(used);
  // K, M, G and KiB, MiB, GiB are binary; KB, MB, GB decimal, as datasheets write them.
  static const std::pair<const char*, int64_t> kSuffixes[] = {{"", 1},
                                                              {"K", 1LL << 10},
                                                              {"k", 1LL << 10},
                                                              {"KiB", 1LL << 10},
                                                              {"KB", 1000},
                                                              {"kB", 1000},
                                                              {"M", 1LL << 20},
                                                              {"m", 1LL << 20},
                                                              {"MiB", 1LL << 20},
                                                              {"MB", 1000000},
                                                              {"G", 1LL << 30},
                                                              {"g", 1LL << 30},
                                                              {"GiB", 1LL << 30},
                                                              {"GB", 1000000000},
                                                              {"T", 1LL << 40},
                                                              {"t", 1LL << 40},
                                                              {"TiB", 1LL << 40},
                                                              {"TB", 1000000000000}};
  int64_t scale = 0;
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix == name) scale = factor;
  }
  if (scale == 0) throw UsageError(what + " '" + echoed(text) + "' is not " + allowed);
  if (value < 0 || (value == 0 && least > 0)) {
    throw UsageError(what + " '" + echoed(text) + "' must be positive");
  }
  if (value > (1LL << 40) / scale) {
    throw UsageError(what + " '" + echoed(text) + "' is above 1 TiB");
  }
  if (value * scale < least) {
    throw UsageError(what + " '" + echoed(text) + "' is less than " + std::to_string(least) +
                     " bytes");
  }
  return value * scale;
}

std::vector<int64_t> parse_byte_sizes(const std::string& text, const std::string& what,
                                      int64_t least) {
  std::vector<int64_t> sizes;
  for (const std::string& entry : split_list(text, what, "48GB,80GB")) {
    sizes.push_back(parse_byte_size(entry, what, least));
  }
  return sizes;
}

}  // namespace gpubench
