#include "launcher/temporary_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/environment.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "launcher/child_process.h"

namespace gpubench {

TemporaryFolder::TemporaryFolder(const std::string& prefix) {
  handle_interruptions();  // before the folder exists: a signal from here on removes it
  const std::optional<std::string> tmpdir = process_environment()(kTemporaryDirectoryVariable);
  const std::string base = tmpdir && !tmpdir->empty() ? *tmpdir : "/tmp";
  std::string pattern = base + "/" + prefix + "-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    const std::string why = std::strerror(errno);
    throw UsageError((tmpdir ? "TMPDIR '" + echoed(base) + "'" : std::string("/tmp")) +
                     " is not a usable temporary directory (" + why +
                     "); set TMPDIR to a writable directory");
  }
  path_ = name.data();
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace gpubench
