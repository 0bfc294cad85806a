// gpubench-train: every subcommand, the ones that need LibTorch among them.
#include "gpubench/benchmark.h"

GPUBENCH_MAIN()
