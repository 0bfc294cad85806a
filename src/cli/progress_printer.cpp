#include "cli/progress_printer.h"

#include <unistd.h>

#include <cstdio>

#include "common/log.h"

#include "common/text_table.h"

namespace gpubench {

ProgressPrinter::ProgressPrinter(std::string label, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), terminal_(::isatty(STDERR_FILENO) == 1) {}

ProgressPrinter::~ProgressPrinter() {
  if (line_open_) std::fputc('\n', stderr);
}

void ProgressPrinter::operator()(const ProgressEvent& e) {
  const std::string phase =
      e.warmup ? "warm-up" : "trial " + std::to_string(e.trial) + "/" + std::to_string(e.trials);
  const std::string rate =
      e.warmup ? "" : "  " + format_fixed(e.samples_per_second, 1) + " " + unit_;
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s  %s  step %d/%d%s", label_.c_str(), phase.c_str(), e.step,
                 e.steps, rate.c_str());
    std::fflush(stderr);
    line_open_ = true;
    return;
  }
  // Off a terminal: the end of warm-up and of each trial only.
  if (e.step == e.steps) {
    log::info("{} {} done ({}){}", label_, phase, counted(e.steps, "step"), rate);
  }
}

}  // namespace gpubench
