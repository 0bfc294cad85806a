// gpubench's whole command line in one call (src/cli/command_line.cpp).
#pragma once

namespace gpubench {

// Every subcommand (train, infer, run, fit, report, ...) with the models this executable
// registers; returns the exit code. Ranks and suite entries run this executable again.
int run_command_line(int argc, char** argv);

}  // namespace gpubench
