#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"

namespace gpubench {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& path, int error) {
  throw UsageError("cannot write '" + echoed(path) + "': " + std::strerror(error));
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// A temporary file beside `path`, created exclusively (mkstemp: O_CREAT | O_EXCL, so a planted
// file or link of that name is never opened), holding `text`, flushed to disk, with `mode` (and
// `owner`'s ids, where the file to replace had them). Returns its name.
std::string write_temporary(const std::string& path, const std::string& text, mode_t mode,
                            const struct stat* owner) {
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = (folder / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail(path, errno);
  bool ok = write_all(fd, text) && ::fchmod(fd, mode) == 0;
  int error = errno;
  if (ok && owner != nullptr && ::fchown(fd, owner->st_uid, owner->st_gid) != 0 &&
      ::geteuid() == 0) {
    ok = false;  // root can keep the owner; anyone else cannot give a file away (not an error)
    error = errno;
  }
  if (ok && ::fsync(fd) != 0) {
    ok = false;
    error = errno;
  }
  ::close(fd);
  if (!ok) {
    ::unlink(name.c_str());
    fail(path, error);
  }
  return name;
}

// What a link names, followed to its end; the link's own path when it is not one. A dangling
// link names where its target will be created.
std::string resolved_target(const std::string& path) {
  std::error_code error;
  fs::path current(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(current, error)); ++hops) {
    const fs::path next = fs::read_symlink(current, error);
    if (error) fail(path, error.value());
    current = next.is_absolute() ? next : current.parent_path() / next;
  }
  if (fs::is_symlink(fs::symlink_status(current, error))) fail(path, ELOOP);
  return current.string();
}

// Writes into a device, FIFO or socket as a shell redirection would, instead of replacing it.
void write_into(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(path, errno);
  const bool ok = write_all(fd, text);
  const int error = errno;
  ::close(fd);
  if (!ok) fail(path, error);
}

}  // namespace

void write_json_atomically(const std::string& path, const nlohmann::json& document) {
  write_text_atomically(path, json_text(document) + "\n");
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string target = resolved_target(path);
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) fail(path, EISDIR);
  if (exists && !S_ISREG(existing.st_mode)) return write_into(target, text);
  const mode_t mode = exists ? (existing.st_mode & 07777) : (0666 & ~current_umask());
  const std::string temporary = write_temporary(target, text, mode, exists ? &existing : nullptr);
  if (std::rename(temporary.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, error);
  }
}

bool is_special_file(const std::string& path) {
  struct stat existing {};
  return ::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) &&
         !S_ISDIR(existing.st_mode);
}

void check_path_limits(const std::string& path, const std::string& what, size_t suffix_room) {
  if (is_special_file(path)) return;
  const size_t name = fs::path(path).filename().string().size() + suffix_room;
  if (name > NAME_MAX) {
    throw UsageError(what + " '" + echoed(path) + "': its file name is " + std::to_string(name) +
                     " characters" + (suffix_room > 0 ? " with room for a -N suffix" : "") +
                     ", more than the " + std::to_string(NAME_MAX) + " a file name may have");
  }
  if (path.size() + suffix_room >= PATH_MAX) {
    throw UsageError(what + " '" + echoed(path) + "' is " + std::to_string(path.size()) +
                     " characters, more than a path may have (" + std::to_string(PATH_MAX - 1) +
                     ")");
  }
}

std::string write_new_file(const std::string& path, const std::string& text) {
  if (is_special_file(path)) {
    write_into(path, text);
    return path;
  }
  const std::string temporary = write_temporary(path, text, 0666 & ~current_umask(), nullptr);
  const fs::path wanted(path);
  const std::string stem = (wanted.parent_path() / wanted.stem()).string();
  const std::string extension = wanted.extension().string();
  for (int n = 1; n < 100000; ++n) {
    const std::string candidate = n == 1 ? path : stem + "-" + std::to_string(n) + extension;
    // link() never replaces: it fails with EEXIST where another run's file is.
    if (::link(temporary.c_str(), candidate.c_str()) == 0) {
      ::unlink(temporary.c_str());
      return candidate;
    }
    if (errno != EEXIST) {
      const int error = errno;
      ::unlink(temporary.c_str());
      fail(path, error);
    }
  }
  ::unlink(temporary.c_str());
  fail(path, EEXIST);
}

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

std::string why_not_writable(const std::string& directory) {
  std::string name = (fs::path(directory) / ".gpubench-probe.XXXXXX").string();
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  ::close(fd);
  ::unlink(name.c_str());
  return "";
}

}  // namespace gpubench
