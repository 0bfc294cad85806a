// A short benchmark resolved for the CPU with two threads and no telemetry, for the tests that
// run one in process.
#pragma once

#include <string>

#include "run/resolve_benchmark.h"

namespace gpubench::testing {

// The request cpu_benchmark resolves, for tests that set more (infer's lengths).
inline BenchmarkRequest cpu_request(const std::string& model, int64_t batch,
                                    Precision precision = Precision::kFp32) {
  BenchmarkRequest request;
  request.model = model;
  request.device = DeviceKind::kCpu;
  request.batch_size = batch;
  request.precision = precision;
  request.warmup_steps = 1;
  request.steps = 2;
  request.repeat = 1;
  request.threads = 2;
  request.telemetry_interval_ms = 0;
  return request;
}

inline ResolvedBenchmark resolved_on_two_cores(const BenchmarkRequest& request) {
  MachineFacts machine;
  machine.cpu_cores = 2;
  return resolve(request, machine);
}

inline ResolvedBenchmark cpu_benchmark(const std::string& model, int64_t batch,
                                       Tuning tuning = Tuning::kFull,
                                       Precision precision = Precision::kFp32) {
  BenchmarkRequest request = cpu_request(model, batch, precision);
  request.tuning = tuning;
  return resolved_on_two_cores(request);
}

}  // namespace gpubench::testing
