// Progress of a run: a rewritten line on a terminal, a few log lines otherwise.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "runner/runner.h"

namespace gpubench {

// The time a run's timed steps have left, from the pace of those done so far (warm-up, whose
// first steps compile and allocate, left out).
class TimeLeft {
 public:
  // At `now` (seconds on any steady clock), `done` of the `total` timed steps are done; the
  // estimate once two such moments are known, else nothing.
  std::optional<double> at(double now, int done, int total);

 private:
  std::optional<std::pair<double, int>> first_;  // (when, done) of the first timed step seen
};

// "about 45 s left", "about 3 min 20 s left", "about 1 h 5 min left", "under 1 s left".
std::string time_left_text(double seconds);

class ProgressPrinter {
 public:
  using Clock = std::function<double()>;  // seconds, steady
  ProgressPrinter(std::string label, std::string unit, Clock clock = {});
  ~ProgressPrinter();
  void operator()(const ProgressEvent& event);

 private:
  std::string label_;
  std::string unit_;
  Clock clock_;
  bool terminal_;
  bool line_open_ = false;
  TimeLeft time_left_;
};

}  // namespace gpubench
