// What every fuzz target checks besides the sanitizers: outside input may be refused only with a
// UsageError of one line (the contract of exit code 2), never with another exception, a crash
// or a message that runs on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "common/errors.h"

namespace gpubench::fuzz {

// Long enough for every message gpubench writes (a list of known keys, an echoed value cut at
// 80 characters, a path), far shorter than what echoing whole inputs would give.
inline constexpr size_t kMaxMessageChars = 1000;

[[noreturn]] inline void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "contract broken: %s: %s\n", what, detail.substr(0, 2000).c_str());
  std::abort();
}

// Runs `parse` on the input; a UsageError must be one short line, and nothing else may escape.
template <typename Parse>
void expect_contract(Parse&& parse) {
  try {
    parse();
  } catch (const UsageError& error) {
    const std::string message = error.what();
    if (message.empty()) broken("empty message", "");
    if (message.find('\n') != std::string::npos) broken("a message of several lines", message);
    if (message.size() > kMaxMessageChars) broken("a message that runs on", message);
  } catch (const std::exception& error) {
    broken("an exception other than UsageError", error.what());
  }
}

}  // namespace gpubench::fuzz
