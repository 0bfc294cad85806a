// gpubench's whole command line for the models this executable registers (example_net.cpp):
//   custom_bench train --model example-net --precision bf16 --gpus 2
// trains it with every gpubench feature (precisions, data parallel, graph mode, memory,
// telemetry), writes a result file, and report/compare/regress read it as any other.
#include "gpubench/benchmark.h"

GPUBENCH_MAIN()
