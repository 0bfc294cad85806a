// `gpubench specs`: the side-by-side datasheet table, with ratios computed only between like
// quantities (the same row: the same precision, dense with dense), TFLOPS per watt and bytes per
// FLOP per precision, and every figure's source.
#pragma once

#include <string>
#include <vector>

#include "datasheets/datasheet_database.h"
#include "reporting/report.h"

namespace gpubench {

// `requests`: accelerator names, each optionally pinned to one peak rate, "L40S:bf16" or
// "H100-SXM:fp8-sparse"; names without a pin take the others' pin. No names: one overview row
// per entry. Throws UsageError for an unknown name (listing the known ones), an unknown
// precision, pins that differ (a ratio of unlike quantities), or a pinned rate an entry lacks.
Report build_specs_report(const DatasheetDatabase& database,
                          const std::vector<std::string>& requests);

// "3.5" for 3.49x-style ratios and small figures alike: `digits` significant digits.
std::string format_significant(double value, int digits);

}  // namespace gpubench
