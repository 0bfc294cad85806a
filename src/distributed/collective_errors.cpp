#include "distributed/collective_errors.h"

#include <cstdio>
#include <regex>

namespace gpubench {

std::string described_collective_error(const std::string& what) {
  static const std::regex kGlooTimeout(R"(Timed out waiting (\d+) ?ms for (\w+) operation)");
  static const std::regex kNcclTimeout(
      R"(Watchdog caught collective operation timeout.*?Timeout\(ms\)=(\d+))");
  std::smatch match;
  const auto seconds = [](const std::string& ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", std::stod(ms) / 1000.0);
    return std::string(text);
  };
  if (std::regex_search(what, match, kGlooTimeout)) {
    return "no answer from a peer rank for " + seconds(match[1]) + " s (the " + match[2].str() +
           " of a collective, --timeout): a rank stopped, hung or died";
  }
  if (std::regex_search(what, match, kNcclTimeout)) {
    return "no answer from a peer rank for " + seconds(match[1]) +
           " s (NCCL's watchdog, --timeout): a rank stopped, hung or died";
  }
  if (what.find("Connection closed by peer") != std::string::npos ||
      what.find("Connection reset by peer") != std::string::npos) {
    return "a peer rank closed its connection during a collective: it died or was ended";
  }
  return "";
}

}  // namespace gpubench
