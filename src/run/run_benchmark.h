// Runs one resolved benchmark on this process's device and measures it (docs/method.md): the
// workload that runs it (train, infer-forward, generate) in a RunSession.
#pragma once

#include <string>

#include "common/errors.h"
#include "results/result.h"
#include "run/run_setup.h"
#include "settings/benchmark.h"

namespace gpubench {

// Never throws for a run-time failure: an out-of-memory gives status oom, anything else
// status failed, both with the error text. With several ranks every rank runs this; the
// result's throughput is global and its metrics are rank 0's, with the exposed communication
// and peak memory of the worst rank.
Result run_benchmark(const ResolvedBenchmark& benchmark, const RunSetup& run_setup = {});

// The result of a run that never reported (a child that died): result_for (run/run_session.h)
// with the error, and the datasheet.
Result failed_result_for(const ResolvedBenchmark& benchmark, const std::string& error);

// The result of a suite entry this machine or build cannot run, never started: status skipped,
// the refusal as its error and what is lacking as its requirement. `benchmark` is the entry as
// far as it resolved: the table's defaults and what the entry set.
Result skipped_result_for(const ResolvedBenchmark& benchmark, const Unavailable& why);

}  // namespace gpubench
