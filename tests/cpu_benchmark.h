// A short benchmark resolved for the CPU with two threads and no telemetry, for the tests that
// run one in process.
#pragma once

#include <string>

#include "run/resolve_benchmark.h"

namespace gpubench::testing {

inline ResolvedBenchmark cpu_benchmark(const std::string& model, int64_t batch,
                                       Tuning tuning = Tuning::kFull,
                                       Precision precision = Precision::kFp32) {
  BenchmarkRequest request;
  request.model = model;
  request.device = DeviceKind::kCpu;
  request.batch_size = batch;
  request.tuning = tuning;
  request.precision = precision;
  request.warmup_steps = 1;
  request.steps = 2;
  request.repeat = 1;
  request.threads = 2;
  request.telemetry_interval_ms = 0;
  MachineFacts machine;
  machine.cpu_cores = 2;
  return resolve(request, machine);
}

}  // namespace gpubench::testing
