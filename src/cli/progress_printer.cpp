#include "cli/progress_printer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "common/log.h"

#include "common/text_table.h"

namespace gpubench {

std::optional<double> TimeLeft::at(double now, int done, int total) {
  if (!first_) {
    first_ = {now, done};
    return std::nullopt;
  }
  const auto [since, done_then] = *first_;
  if (done <= done_then || now < since) return std::nullopt;
  return (now - since) / (done - done_then) * std::max(0, total - done);
}

std::string time_left_text(double seconds) {
  const auto whole = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  if (whole == 0) return "under 1 s left";
  std::string text;
  if (whole < 60) {
    text = std::to_string(whole) + " s";
  } else if (whole < 3600) {
    text = std::to_string(whole / 60) + " min" +
           (whole % 60 == 0 ? "" : " " + std::to_string(whole % 60) + " s");
  } else {
    text = std::to_string(whole / 3600) + " h" +
           (whole % 3600 / 60 == 0 ? "" : " " + std::to_string(whole % 3600 / 60) + " min");
  }
  return "about " + text + " left";
}

ProgressPrinter::ProgressPrinter(std::string label, std::string unit, Clock clock)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      clock_(clock ? std::move(clock)
                   : [] {
                       return std::chrono::duration<double>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                           .count();
                     }),
      terminal_(::isatty(STDERR_FILENO) == 1) {}

ProgressPrinter::~ProgressPrinter() {
  if (line_open_) std::fputc('\n', stderr);
}

void ProgressPrinter::operator()(const ProgressEvent& e) {
  const std::string phase =
      e.warmup ? "warm-up" : "trial " + std::to_string(e.trial) + "/" + std::to_string(e.trials);
  const std::string rate =
      e.warmup ? "" : "  " + format_fixed(e.samples_per_second, 1) + " " + unit_;
  std::optional<double> left;
  if (!e.warmup)
    left = time_left_.at(clock_(), (e.trial - 1) * e.steps + e.step, e.trials * e.steps);
  const bool last = !e.warmup && e.trial == e.trials && e.step == e.steps;
  if (terminal_) {
    const std::string eta = left && !last ? "  " + time_left_text(*left) : "";
    std::fprintf(stderr, "\r\033[K%s  %s  step %d/%d%s%s", label_.c_str(), phase.c_str(), e.step,
                 e.steps, rate.c_str(), eta.c_str());
    std::fflush(stderr);
    line_open_ = true;
    return;
  }
  // Off a terminal: the end of warm-up and of each trial only.
  if (e.step == e.steps) {
    const std::string eta = left && !last ? ", " + time_left_text(*left) : "";
    log::info("{} {} done ({}){}{}", label_, phase, counted(e.steps, "step"), rate, eta);
  }
}

}  // namespace gpubench
