// gpubench-train: every subcommand, the ones that need LibTorch among them (cli/command_line.h).
#include "cli/command_line.h"

int main(int argc, char** argv) {
  return gpubench::run_command_line(argc, argv);
}
