#include "datasheets/run_efficiency.h"

#include "datasheets/decode_ceiling.h"

namespace gpubench {

namespace {

void match_datasheet(const DatasheetDatabase& database, Result& result) {
  DatasheetInfo& info = result.datasheet;
  info = DatasheetInfo{};
  result.metrics.achieved_fraction_of_peak = 0;
  if (result.benchmark.device != DeviceKind::kCuda) {
    info.reason = "CPU run: the database lists accelerators only";
    return;
  }
  if (result.system.gpu_name.empty()) {
    info.reason = "no GPU name recorded";
    return;
  }
  const DeviceMatch match =
      match_device(database, result.system.gpu_name, result.system.gpu_memory_bytes);
  info.reason = match.reason;
  if (match.entry == nullptr) return;
  const Accelerator& entry = *match.entry;
  info.matched = true;
  info.entry = entry.name;
  info.memory_bandwidth_gbs = entry.number("memory_bandwidth_gbs").value_or(0);
  info.tdp_w = entry.number("tdp_w").value_or(0);
  const Quantity* peak = peak_rate_quantity(to_string(result.benchmark.precision), false);
  const Figure* figure = peak != nullptr ? entry.figure(peak->key) : nullptr;
  if (figure == nullptr) {
    info.reason += "; the entry gives no dense " + to_string(result.benchmark.precision) + " rate";
    return;
  }
  info.peak_quantity = peak->key;
  info.peak_tflops = figure->used.number;
  const auto source = database.sources.find(figure->used.source);
  info.peak_source = source != database.sources.end() ? source->second.url : figure->used.source;
  const int devices = std::max(1, result.distributed.world_size);
  if (result.metrics.achieved_tflops > 0) {
    result.metrics.achieved_fraction_of_peak =
        result.metrics.achieved_tflops / (info.peak_tflops * devices);
  }
}

}  // namespace

void attach_datasheet(const DatasheetDatabase& database, Result& result) {
  match_datasheet(database, result);
  attach_decode_ceiling(result);
}

void attach_datasheet(Result& result) {
  try {
    attach_datasheet(datasheets(), result);
  } catch (const std::exception& error) {
    result.datasheet = DatasheetInfo{};
    result.datasheet.reason = error.what();
    attach_decode_ceiling(result);
  }
}

}  // namespace gpubench
