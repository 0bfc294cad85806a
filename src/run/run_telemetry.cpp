#include "run/run_telemetry.h"

#include "common/json_text.h"
#include "common/log.h"
#include "distributed/collectives.h"
#include "system/system_probe.h"
#include "telemetry/nvml_source.h"
#include "telemetry/rapl_source.h"

namespace gpubench {

RunTelemetry::RunTelemetry(const ResolvedBenchmark& spec, const RankPlacement& rank)
    : rank_(rank), interval_ms_(spec.telemetry_interval_ms) {
  const bool gpu = spec.device == DeviceKind::kCuda;
  source_name_ = gpu ? "nvml" : "rapl";
  gathered_ = gpu && rank.collectives != nullptr;
  if (interval_ms_ == 0) {
    reason_ = "telemetry off (--telemetry-interval-ms 0)";
    source_name_ = "none";
    return;
  }
  const int rank_index = rank.collectives ? rank.collectives->rank() : 0;
  if (!gpu && rank_index != 0) return;  // rank 0 reads the host's counters
  OpenedSource opened =
      gpu ? open_nvml_source(cuda_pci_bus_id(rank.device_index), rank.device_index)
          : open_rapl_source();
  if (!opened.source) {
    reason_ = opened.reason;
    log::debug("telemetry unavailable: {}", reason_);  // the table's telemetry line says why
    return;
  }
  recorder_ = std::make_unique<TelemetryRecorder>(std::move(opened.source),
                                                  std::chrono::milliseconds(interval_ms_));
}

void RunTelemetry::window_opened() {
  if (recorder_) recorder_->begin_window();
}

void RunTelemetry::window_closed() {
  if (recorder_) recorder_->end_window();
}

TelemetryReport RunTelemetry::report(double timed_samples) {
  DeviceTelemetry mine;
  if (recorder_) {
    mine = recorder_->summary();
  } else {
    mine.reason = reason_;
  }
  mine.rank = rank_.collectives ? rank_.collectives->rank() : 0;
  std::vector<DeviceTelemetry> devices{mine};
  if (gathered_) {
    devices.clear();
    for (const std::string& text :
         rank_.collectives->gather_text(json_text(nlohmann::json(mine), -1))) {
      try {
        devices.push_back(device_telemetry_from_json(nlohmann::json::parse(text)));
      } catch (const std::exception& error) {
        DeviceTelemetry lost;
        lost.rank = static_cast<int>(devices.size());
        lost.reason = std::string("its telemetry could not be gathered: ") + error.what();
        devices.push_back(lost);
      }
    }
  }
  if (!devices.front().available && devices.size() == 1) {
    return unavailable_telemetry(devices.front().reason, source_name_, interval_ms_);
  }
  TelemetryReport report =
      combine_device_telemetry(devices, timed_samples, source_name_, interval_ms_);
  if (!gathered_ && rank_.collectives && rank_.collectives->nodes() > 1) {
    report.flags.push_back("CPU energy of the first host only: each host has its own packages");
  }
  return report;
}

}  // namespace gpubench
