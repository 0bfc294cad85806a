// Progress of a run: a rewritten line on a terminal, a few log lines otherwise.
#pragma once

#include <string>

#include "runner/runner.h"

namespace gpubench {

class ProgressPrinter {
 public:
  ProgressPrinter(std::string label, std::string unit);
  ~ProgressPrinter();
  void operator()(const ProgressEvent& event);

 private:
  std::string label_;
  std::string unit_;
  bool terminal_;
  bool line_open_ = false;
};

}  // namespace gpubench
