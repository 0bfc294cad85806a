// Progress of a run, and of long work before it (building the model, fit's probes, counting the
// models): a rewritten line on stderr when it is a terminal, a few log lines otherwise; nothing
// at a log level above info (--quiet).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "common/phase_progress.h"
#include "launcher/launch.h"

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

// While it lives, also the listener of report_phase (common/phase_progress.h).
class ProgressPrinter {
 public:
  using Clock = std::function<double()>;  // seconds, steady
  // `terminal`: whether stderr is one (where not given, asked of it).
  ProgressPrinter(std::string label, std::string unit, Clock clock = {},
                  std::optional<bool> terminal = std::nullopt);
  ~ProgressPrinter();
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;
  void operator()(const ProgressEvent& event);
  void phase(const PhaseEvent& event);

 private:
  void show(const std::string& line, bool phase_line);

  std::string label_;
  std::string unit_;
  Clock clock_;
  bool terminal_;
  bool enabled_;
  bool line_open_ = false;
  bool phase_line_ = false;
  TimeLeft time_left_;
  std::string phase_;  // the counted phase whose pace `phase_time_left_` holds
  TimeLeft phase_time_left_;
  PhaseListening listening_;
};

}  // namespace gpubench
