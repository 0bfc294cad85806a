// gpubench from code: one benchmark of example-net (example_net.cpp) resolved on this machine
// and run in this process (run_request), its result written whole (write_result_file) and read
// back (read_result_file).
//   run_from_code RESULT.json
#include <cstdio>

#include "gpubench/benchmark.h"
#include "gpubench/results.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: run_from_code RESULT.json\n");
    return 2;
  }
  gpubench::BenchmarkRequest request;
  request.model = "example-net";
  request.device = gpubench::DeviceKind::kCpu;
  request.batch_size = 2;
  request.warmup_steps = 1;
  request.steps = 2;
  request.repeat = 1;
  try {
    const gpubench::Result result = gpubench::run_request(request);
    gpubench::write_result_file(argv[1], result);
    const gpubench::Result written = gpubench::read_result_file(argv[1]);
    std::printf("%s %s: %.1f %s\n", written.benchmark.model.c_str(),
                gpubench::to_string(written.status).c_str(), written.metrics.throughput,
                written.metrics.throughput_unit.c_str());
    return written.status == gpubench::RunStatus::kOk ? 0 : 1;
  } catch (const gpubench::UsageError& error) {
    std::fprintf(stderr, "run_from_code: %s\n", error.what());
    return 2;
  }
}
