// Byte counts as options give them ("64M"), read in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpubench {

// The smallest memory a card may have (fit's --memory) and so the smallest limit a batch search
// hands fit: under 1 MiB is a typo ("48" for 48GB), not a card (the test models fit in a few).
inline constexpr int64_t kSmallestCardBytes = int64_t{1} << 20;

// "64M" -> 67108864; K, M, G, T (and KiB, MiB, GiB, TiB) are binary, KB, MB, GB, TB decimal;
// from `least` bytes (1 unless the option means "none" by 0) to 1 TiB. Throws UsageError naming
// `what` (the option) and the text.
int64_t parse_byte_size(const std::string& text, const std::string& what, int64_t least = 1);

// A comma-separated list of byte counts ("48GB,80GB"), each at least `least`; an empty entry
// (",48GB", "48GB,", "48GB,,80GB") is refused as anywhere else a list is given.
std::vector<int64_t> parse_byte_sizes(const std::string& text, const std::string& what,
                                      int64_t least = 1);

}  // namespace gpubench
