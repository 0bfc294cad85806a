#include "common/input_limits.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "common/errors.h"

namespace gpubench {
namespace {

int line_at(const std::string& text, size_t byte) {
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(byte, text.size()));
  return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
}

// A file descriptor closed on every path out.
class OpenFile {
 public:
  // Non-blocking, so that opening a FIFO with no writer or a terminal device cannot hang.
  explicit OpenFile(const std::string& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {}
  ~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A library's reason is our text, not the input's, and is not cut as short as echoed input.
constexpr size_t kMaxLibraryReasonChars = 160;

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ...; last
// read: '...'" -> "syntax error ...": the position is given as a line, the input is not echoed.
std::string library_reason(const std::string& what) {
  std::string reason = what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2);
  if (const size_t column = reason.find(", column "); column != std::string::npos) {
    const size_t colon = reason.find(": ", column);
    if (colon != std::string::npos) reason = reason.substr(colon + 2);
  }
  return echoed(reason.substr(0, reason.find("; last read")), kMaxLibraryReasonChars);
}

}  // namespace

std::string shown(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

std::string echoed(const std::string& text, size_t max_chars) {
  return shown(text.substr(0, max_chars)) + (text.size() > max_chars ? "..." : "");
}

std::vector<std::string> split_list(const std::string& text, const std::string& what,
                                    const std::string& example) {
  std::vector<std::string> entries;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    entries.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (entries.back().empty()) {
      throw UsageError(what + " '" + echoed(text) +
                       "' has an empty entry; give values separated by commas, such as " + example);
    }
    if (std::find(entries.begin(), entries.end() - 1, entries.back()) != entries.end() - 1) {
      throw UsageError(what + " '" + echoed(text) + "' gives '" + echoed(entries.back()) +
                       "' twice; give each value once, such as " + example);
    }
    if (comma == std::string::npos) return entries;
    start = comma + 1;
  }
}

std::string echoed(const nlohmann::json& value) {
  if (value.is_array()) return "a list of " + std::to_string(value.size()) + " value(s)";
  if (value.is_object()) return "a mapping of " + std::to_string(value.size()) + " key(s)";
  return echoed(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string read_input_file(const std::string& path, const std::string& what) {
  const std::string named = what + " '" + echoed(path) + "'";
  const OpenFile file(path);
  if (file.fd() < 0) throw UsageError("cannot read " + named + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(file.fd(), &info) != 0) {
    throw UsageError("cannot read " + named + ": " + std::strerror(errno));
  }
  if (S_ISDIR(info.st_mode)) throw UsageError(named + " is a directory, not a file");
  // A pipe (`<(...)`, /dev/stdin) is read as far as the limit; a device is not a file.
  if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode)) {
    throw UsageError(named + " is not a regular file");
  }
  // Blocking reads from here: a pipe's writer may be slow; a FIFO with none reads as empty.
  ::fcntl(file.fd(), F_SETFL, ::fcntl(file.fd(), F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(file.fd(), buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw UsageError("cannot read " + named + ": " + std::strerror(errno));
    }
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > kMaxInputFileBytes) {
      throw UsageError(named + " is larger than " + std::to_string(kMaxInputFileBytes >> 20) +
                       " MiB; no " + what + " is that large");
    }
  }
  return text;
}

nlohmann::json parse_json_input(const std::string& text, const std::string& name) {
  // The keys of each open object, to refuse a key given twice (the parser would keep the last
  // silently), and the depth, to refuse nesting past the limit before it is built.
  std::vector<std::set<std::string>> open_objects;
  const auto checked = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (depth > kMaxNestingDepth) {
      throw UsageError("nested more than " + std::to_string(kMaxNestingDepth) + " levels deep");
    }
    if (event == Event::object_start) open_objects.emplace_back();
    if (event == Event::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == Event::key && !open_objects.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second) {
      throw UsageError("key '" + echoed(parsed.get<std::string>()) +
                       "' is given twice in one object");
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, checked);
  } catch (const nlohmann::json::parse_error& error) {
    throw UsageError(echoed(name) + ":" + std::to_string(line_at(text, error.byte)) +
                     ": malformed JSON: " + library_reason(error.what()));
  } catch (const nlohmann::json::exception& error) {  // a number too large for any type
    throw UsageError(echoed(name) + ": malformed JSON: " + library_reason(error.what()));
  } catch (const UsageError& error) {
    throw UsageError(echoed(name) + ": " + error.what());
  }
}

nlohmann::json read_json_input_file(const std::string& path, const std::string& what) {
  return parse_json_input(read_input_file(path, what), path);
}

int64_t checked_multiply(int64_t a, int64_t b, const std::string& what) {
  if (a < 0 || b < 0 || (a != 0 && b > std::numeric_limits<int64_t>::max() / a)) {
    throw UsageError(what + " overflows (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  }
  return a * b;
}

}  // namespace gpubench
