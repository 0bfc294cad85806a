// Byte counts as options give them ("64M"), read in one place.
#pragma once

#include <cstdint>
#include <string>

namespace gpubench {

// "64M" -> 67108864; K, M, G (and KiB, MiB, GiB) are binary, KB, MB, GB decimal; from 1 byte
// to 1 TiB. Throws UsageError naming
// `what` (the option) and the text.
int64_t parse_byte_size(const std::string& text, const std::string& what);

}  // namespace gpubench
