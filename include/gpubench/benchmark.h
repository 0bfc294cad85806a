// Running gpubench from code (docs/api.md): one benchmark in this process, or gpubench's whole
// command line in an executable of your own, with the models it registers
// (include/gpubench/model.h).
#pragma once

#include <map>
#include <string>

#include "gpubench/errors.h"
#include "gpubench/results.h"

namespace gpubench {

// A benchmark as asked for: its settings by their suite keys, each value as the command line
// writes it ({"model", "resnet50"}, {"batch_size", "64"}, {"precision", "bf16"}); the keys are
// docs/reference/options.md's. What it leaves out is decided as `gpubench train` decides it (by
// the task: "infer" runs inference).
using RequestedSettings = std::map<std::string, std::string>;

// `settings` resolved on this machine (the model's defaults, the precision policy, the devices
// present) and run in this process, as `gpubench train` runs one device. A run that fails (out of
// memory, an error) returns its result with the status that says so. Throws UsageError for a
// request that cannot run here, naming the bad value: an unknown key or value, or several ranks
// (several processes: GPUBENCH_MAIN's `train --gpus N`).
RunResult run_in_this_process(const RequestedSettings& settings);

// gpubench's command line: every subcommand (train, infer, run, fit, report, compare, regress,
// ...). Returns the exit code.
int run_command_line(int argc, char** argv);

}  // namespace gpubench

// main() as gpubench-train has it: data-parallel ranks and suite entries run this executable
// again.
#define GPUBENCH_MAIN()                              \
  int main(int argc, char** argv) {                  \
    return ::gpubench::run_command_line(argc, argv); \
  }
