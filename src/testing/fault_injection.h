// Test hook: GPUBENCH_FAULT_INJECTION=throw|oom|abort|hang[:MODEL_OR_PRECISION_OR_rankN] makes
// the first timed step fail in that way (only for that model, precision or rank when one is
// given), so the failure paths of train and run can be exercised on any machine. Read once,
// before the benchmark starts.
#pragma once

#include <optional>
#include <string>

#include "settings/setting_values.h"

namespace gpubench {

enum class FaultKind { kThrow, kOom, kAbort, kHang };

struct FaultInjection {
  FaultKind kind = FaultKind::kThrow;
  [[noreturn]] void trigger() const;
};

// The fault `setting` asks of a benchmark of `model` in `precision` on this rank; nothing when
// unset or aimed at another model, precision or rank. Throws UsageError for a setting it cannot
// read.
std::optional<FaultInjection> fault_for(const std::optional<std::string>& setting,
                                        const std::string& model, Precision precision, int rank);

}  // namespace gpubench
