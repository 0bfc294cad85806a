#include "common/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {

void write_json_atomically(const std::string& path, const nlohmann::json& document) {
  write_text_atomically(path, document.dump(2) + "\n");
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const auto fail = [&](int error) {
    std::remove(temporary.c_str());
    throw UsageError("cannot write '" + echoed(path) + "': " + std::strerror(error));
  };
  std::FILE* file = std::fopen(temporary.c_str(), "w");
  if (file == nullptr) fail(errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size() &&
                       std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  const int write_errno = errno;
  std::fclose(file);
  if (!written) fail(write_errno);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail(errno);
}

}  // namespace gpubench
