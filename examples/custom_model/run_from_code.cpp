// gpubench from code: one benchmark of example-net (example_net.cpp) resolved on this machine
// and run in this process (run_in_this_process), its result written whole (write_result) and
// read back (read_result).
//   run_from_code RESULT.json
#include <cstdio>

#include "gpubench/benchmark.h"
#include "gpubench/results.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: run_from_code RESULT.json\n");
    return 2;
  }
  try {
    const gpubench::RunResult result = gpubench::run_in_this_process({{"model", "example-net"},
                                                                      {"device", "cpu"},
                                                                      {"batch_size", "2"},
                                                                      {"warmup_steps", "1"},
                                                                      {"steps", "2"},
                                                                      {"repeat", "1"}});
    gpubench::write_result(argv[1], result);
    const gpubench::RunResult written = gpubench::read_result(argv[1]);
    std::printf("%s %s: %.1f %s\n", written.model.c_str(), written.status.c_str(),
                written.throughput, written.throughput_unit.c_str());
    return written.ok() ? 0 : 1;
  } catch (const gpubench::UsageError& error) {
    std::fprintf(stderr, "run_from_code: %s\n", error.what());
    return 2;
  }
}
