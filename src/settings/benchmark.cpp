#include "settings/benchmark.h"

namespace gpubench {

// Every member of settings/benchmark_settings.def, so that a new setting cannot be left out.
bool BenchmarkRequest::operator==(const BenchmarkRequest& other) const {
#define GPUBENCH_SETTING(section, member, type, ...) \
  if (!(member == other.member)) return false;
#include "settings/benchmark_settings.def"
#undef GPUBENCH_SETTING
  return true;
}

bool ResolvedBenchmark::operator==(const ResolvedBenchmark& other) const {
#define GPUBENCH_SETTING(section, member, type, ...) \
  if (!(member == other.member)) return false;
#include "settings/benchmark_settings.def"
#undef GPUBENCH_SETTING
  return true;
}

}  // namespace gpubench
