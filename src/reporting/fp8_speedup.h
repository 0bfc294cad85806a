// `gpubench specs --results`: on each card, the measured FP8 over BF16 speed-up of every
// benchmark run in both precisions (docs/fp8.md), beside the datasheet's FP8/BF16 peak ratio
// and the share of the products that ran in FP8.
#pragma once

#include <vector>

#include "datasheets/datasheet_database.h"
#include "reporting/report.h"
#include "results/result_set.h"

namespace gpubench {

// One row per card, benchmark (every identity setting but the precision and the FP8 recipe)
// and recipe, where the results hold a measured bf16 run and an fp8 run of it; the newest of
// each. No row: the table says so in its title.
ReportTable fp8_speedup_table(const std::vector<LoadedResult>& results,
                              const DatasheetDatabase& database);

}  // namespace gpubench
