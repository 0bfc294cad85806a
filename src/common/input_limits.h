// Bounds on what outside input (files, flags, environment variables) can make gpubench do, each
// defined once, and the guards that enforce them where input enters: a file is read whole only
// up to a size, a JSON document only to a nesting depth, text echoed in a message is cut, and
// arithmetic on sizes is checked. Every guard throws UsageError (exit code 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

// Suite, result and benchmark files are a few kilobytes; 16 MiB leaves room for any real one.
inline constexpr int64_t kMaxInputFileBytes = 16LL << 20;
// Suites and results are at most four levels deep; 64 refuses only what no writer makes.
inline constexpr int kMaxNestingDepth = 64;
// What the tool can build, and so the most a result file may say it built: repeated blocks (the
// deepest model, Llama 3.1 405B, has 126) and gradient bytes (405B's float32 gradients are
// 1.6 TB, under 2^41).
inline constexpr int64_t kMaxModelBlocks = 4096;
inline constexpr int64_t kMaxGradientBytes = int64_t{1} << 50;  // 1 PiB
// Input echoed in an error message is cut to this many characters, with an ellipsis.
inline constexpr size_t kMaxEchoedChars = 80;
// A whole error line: its own words, an echoed value or two, and the longest list of allowed
// values (the selector keys, about 300 characters).
inline constexpr size_t kMaxErrorLineChars = 460;

// `text` with each control character shown as '?': a path or a value printed whole (a result
// file's name may hold any byte but '/' and NUL) that must stay on its line and never drive the
// terminal.
std::string shown(const std::string& text);
// `text` as it goes into a message: at most kMaxEchoedChars characters, "..." marking a cut,
// control characters shown as '?', so that one bad value stays one line.
std::string echoed(const std::string& text, size_t max_chars = kMaxEchoedChars);
inline std::string echoed(const char* text, size_t max_chars = kMaxEchoedChars) {
  return echoed(std::string(text), max_chars);
}
// A JSON value as it goes into a message: scalars as JSON text (echoed), containers by their
// kind and size ("a list of 3 values"), never walked (they may be huge or deep).
std::string echoed(const nlohmann::json& value);

// The entries of a comma-separated option value ("48GB,80GB", "1,8,32"): the one list rule of
// every list option. An empty entry anywhere (",48GB", "48GB,", "1,,8", "") and an entry given
// twice ("8,8") are refused, naming `what` and showing `example`.
std::vector<std::string> split_list(const std::string& text, const std::string& what,
                                    const std::string& example);

// The whole of a regular file of at most kMaxInputFileBytes. `what` names it in messages
// ("suite file"). Refuses a directory, a device or FIFO that never ends, and an unreadable or
// oversized file, naming the path.
std::string read_input_file(const std::string& path, const std::string& what);

// Parses JSON text with nesting up to kMaxNestingDepth; `name` (a path) and the line of a
// syntax error go into the message.
nlohmann::json parse_json_input(const std::string& text, const std::string& name);
// read_input_file + parse_json_input.
nlohmann::json read_json_input_file(const std::string& path, const std::string& what);

// a * b for non-negative operands, or UsageError "<what> overflows (a x b)".
int64_t checked_multiply(int64_t a, int64_t b, const std::string& what);

}  // namespace gpubench
