#include "reporting/predicted_scaling.h"

#include "common/errors.h"
#include "common/text_table.h"
#include "datasheets/datasheet_database.h"
#include "features/parallelism/scaling/scaling_prediction.h"

namespace gpubench {
namespace {

ReportCell text_cell(const std::string& text) {
  return {std::nullopt, text};
}

ReportCell number_cell(double value, int decimals, const std::string& suffix = "") {
  return {value, format_fixed(value, decimals) + suffix};
}

}  // namespace

void add_predicted_scaling_table(const std::vector<LoadedResult>& results,
                                 const PredictionOptions& options, Report& report) {
  if (options.gpus <= 0) return;
  const DatasheetDatabase& database = datasheets();
  std::optional<Fabric> given;
  if (!options.fabric.empty()) given = parse_fabric(options.fabric, database, "--predict-fabric");
  ReportTable table;
  table.id = "predicted";
  table.title = "Predicted " + std::to_string(options.gpus) +
                "-GPU data parallelism from measured single-device runs (predicted, not "
                "measured; docs/scaling.md)";
  table.label_columns = {"model", "precision", "GPU", "unit"};
  table.columns = {"measured 1 GPU", "predicted " + std::to_string(options.gpus) + " GPUs",
                   "predicted efficiency", "fabric", "bottleneck"};
  for (const LoadedResult& loaded : results) {
    const Result& r = loaded.result;
    if (r.status != RunStatus::kOk || r.benchmark.task != Task::kTrain ||
        r.distributed.world_size != 1 || !r.timeline.present()) {
      continue;
    }
    const ScaleInput input = scale_input_from(r);
    ReportRow row{{input.model, input.precision, input.device, input.unit}, {}};
    row.cells.push_back(number_cell(input.throughput, 1));
    if (!given && !r.datasheet.matched) {
      row.cells.push_back(text_cell("no fabric: no datasheet entry (give --predict-fabric)"));
      row.cells.resize(table.columns.size(), text_cell(""));
      table.rows.push_back(std::move(row));
      continue;
    }
    const Fabric fabric = given ? *given : parse_fabric(r.datasheet.entry, database);
    if (!fabric_reaches(fabric, options.gpus, options.gpus_per_node)) {
      row.cells.push_back(text_cell("beyond one node: the fabric names no network"));
      row.cells.resize(table.columns.size(), text_cell(""));
      table.rows.push_back(std::move(row));
      continue;
    }
    const ScalePoint point = predict_point(input, options.gpus, options.gpus_per_node, fabric);
    row.cells.push_back(number_cell(point.throughput, 1, " (predicted)"));
    row.cells.push_back(number_cell(100 * point.efficiency, 1, " % (predicted)"));
    row.cells.push_back(text_cell(fabric.label));
    row.cells.push_back(text_cell(point.bottleneck));
    table.rows.push_back(std::move(row));
  }
  if (!table.rows.empty()) report.tables.push_back(std::move(table));
}

}  // namespace gpubench
