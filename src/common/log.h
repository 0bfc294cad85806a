// Logging to stderr through spdlog, kept behind this header: spdlog brings its own fmt, which
// must never meet the (different) fmt that LibTorch 2.x ships in the same translation unit.
// Messages take "{}" placeholders, filled in order with operator<<.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace gpubench::log {

enum class Level { kDebug, kInfo, kWarn, kError };

// `level`: trace, debug, info, warn, error or off.
void configure(const std::string& level);
void write(Level level, const std::string& message);
// Whether a message at `level` is written at the configured level (progress follows it too).
bool enabled(Level level);

namespace detail {
inline void substitute(std::ostringstream& out, const char* pattern) {
  out << pattern;
}

template <typename First, typename... Rest>
void substitute(std::ostringstream& out, const char* pattern, const First& first,
                const Rest&... rest) {
  for (; *pattern != '\0'; ++pattern) {
    if (pattern[0] == '{' && pattern[1] == '}') {
      out << first;
      substitute(out, pattern + 2, rest...);
      return;
    }
    out << *pattern;
  }
}
}  // namespace detail

template <typename... Args>
std::string format(const char* pattern, const Args&... args) {
  std::ostringstream out;
  detail::substitute(out, pattern, args...);
  return out.str();
}

template <typename... Args>
void debug(const char* pattern, const Args&... args) {
  write(Level::kDebug, format(pattern, args...));
}
template <typename... Args>
void info(const char* pattern, const Args&... args) {
  write(Level::kInfo, format(pattern, args...));
}
template <typename... Args>
void warn(const char* pattern, const Args&... args) {
  write(Level::kWarn, format(pattern, args...));
}
template <typename... Args>
void error(const char* pattern, const Args&... args) {
  write(Level::kError, format(pattern, args...));
}

}  // namespace gpubench::log
