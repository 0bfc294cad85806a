// Running gpubench from code (docs/api.md): one benchmark in this process, or gpubench's whole
// command line in an executable of your own, with the models it registers
// (include/gpubench/model.h).
#pragma once

#include "cli/command_line.h"
#include "common/errors.h"  // UsageError: a request that cannot run here
#include "results/result.h"
#include "run/run_benchmark.h"
#include "settings/setting_values.h"
#include "settings/benchmark_fields.h"

// main() as gpubench-train has it: every subcommand (train, infer, run, fit, report, compare,
// regress, ...); data-parallel ranks and suite entries run this executable again.
#define GPUBENCH_MAIN()                              \
  int main(int argc, char** argv) {                  \
    return ::gpubench::run_command_line(argc, argv); \
  }
