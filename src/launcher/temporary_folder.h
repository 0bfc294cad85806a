// A private folder under the temporary directory ($TMPDIR, else /tmp) for one run's hand-over
// files (benchmark files, rank results), removed with everything in it when the object goes:
// on a normal return, on an error, and on SIGINT or SIGTERM (child_process.h turns those into an
// Interrupted exception while gpubench waits for its children, so destructors run). Only a
// SIGKILL leaves it behind.
#pragma once

#include <string>

namespace gpubench {

class TemporaryFolder {
 public:
  // "gpubench-ranks" -> $TMPDIR/gpubench-ranks-XXXXXX (mkdtemp: new, mode 0700). Throws
  // UsageError naming TMPDIR when it is not a usable directory.
  explicit TemporaryFolder(const std::string& prefix);
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace gpubench
