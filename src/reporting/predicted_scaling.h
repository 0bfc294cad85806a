// The predicted N-GPU figures `report --predict-gpus N` and `compare --predict-gpus N` add beside
// the measured single-device ones (docs/scaling.md): one row per single-device training result
// with a backward timeline, on its own GPU's node (its datasheet entry) or on --predict-fabric.
// Marked predicted in the table's title and every cell.
#pragma once

#include <string>
#include <vector>

#include "reporting/report.h"

namespace gpubench {

struct PredictionOptions {
  int gpus = 0;        // 0: no prediction table
  std::string fabric;  // a --fabric value; empty: each result's own GPU
  int gpus_per_node = 8;
};

void add_predicted_scaling_table(const std::vector<LoadedResult>& results,
                                 const PredictionOptions& options, Report& report);

}  // namespace gpubench
