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

ProgressPrinter::ProgressPrinter(std::string label, std::string unit, Clock clock,
                                 std::optional<bool> terminal)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      clock_(clock ? std::move(clock)
                   : [] {
                       return std::chrono::duration<double>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                           .count();
                     }),
      terminal_(terminal.value_or(::isatty(STDERR_FILENO) == 1)),
      enabled_(log::enabled(log::Level::kInfo)),
      listening_([this](const PhaseEvent& event) { phase(event); }) {}

// A trial's last line stays; a phase's line (what was under way) is cleared.
ProgressPrinter::~ProgressPrinter() {
  if (line_open_) std::fputs(phase_line_ ? "\r\033[K" : "\n", stderr);
}

void ProgressPrinter::show(const std::string& line, bool phase_line) {
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  line_open_ = true;
  phase_line_ = phase_line;
}

void ProgressPrinter::operator()(const ProgressEvent& e) {
  if (!enabled_) return;
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
    show(label_ + "  " + phase + "  step " + std::to_string(e.step) + "/" +
             std::to_string(e.steps) + rate + eta,
         false);
    if (last) {  // the run's last line stays, ended before the table comes
      std::fputc('\n', stderr);
      line_open_ = false;
    }
    return;
  }
  // Off a terminal: the end of warm-up and of each trial only.
  if (e.step == e.steps) {
    const std::string eta = left && !last ? ", " + time_left_text(*left) : "";
    log::info("{} {} done ({}){}{}", label_, phase, counted(e.steps, "step"), rate, eta);
  }
}

// Counted phases estimate the time left from the pace of the items started so far.
// Off a terminal nothing: a script's output (fit --format json 2>&1) stays what it was.
void ProgressPrinter::phase(const PhaseEvent& e) {
  if (!enabled_ || !terminal_) return;
  std::string eta;
  if (e.items > 0) {
    if (e.phase != phase_ || e.item == 1) phase_ = e.phase, phase_time_left_ = TimeLeft();
    if (const auto left = phase_time_left_.at(clock_(), e.item - 1, e.items)) {
      eta = "  " + time_left_text(*left);
    }
  }
  const std::string count =
      e.items > 0 ? " " + std::to_string(e.item) + "/" + std::to_string(e.items) : "";
  const std::string what = e.phase + count + (e.detail.empty() ? "" : ": " + e.detail);
  show(label_ + "  " + what + eta, true);
}

}  // namespace gpubench
