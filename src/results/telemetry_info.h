// What a run's devices drew and how they clocked during the timed windows: the result's
// "telemetry" block (docs/telemetry.md). Measuring it is telemetry/'s job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

struct ThrottleShare {
  std::string reason;  // sw_power_cap, hw_slowdown, sw_thermal, hw_thermal, hw_power_brake, ...
  double share = 0;    // of the samples, with the reason active
};

struct DeviceTelemetry {
  std::string device;  // "cuda:0 NVIDIA H200 (0000:19:00.0)", "cpu packages (RAPL)"
  int rank = 0;
  bool available = false;
  std::string reason;  // why there are no figures
  int64_t samples = 0;
  double window_s = 0;  // the timed windows, summed
  double mean_power_w = 0;
  double max_power_w = 0;
  double energy_j = 0;
  std::string energy_source;  // "energy counter" or "integrated power"
  double median_sm_clock_mhz = 0;
  double min_sm_clock_mhz = 0;
  double median_memory_clock_mhz = 0;
  double max_temperature_c = 0;
  int64_t max_memory_used_bytes = 0;
  std::vector<ThrottleShare> throttle_reasons;
  // Read once per run.
  double power_limit_w = 0;
  double max_sm_clock_mhz = 0;
  double applications_sm_clock_mhz = 0;
  std::string persistence_mode;    // "enabled", "disabled"; empty when unknown
  std::vector<std::string> flags;  // what makes a figure less than it seems
};

struct TelemetryReport {
  bool available = false;
  std::string reason;  // when no device has figures
  std::string source;  // "nvml", "rapl", "none"
  int interval_ms = 0;
  std::vector<DeviceTelemetry> devices;
  // Over all devices: power and energy summed, clocks and temperature over the devices.
  double mean_power_w = 0;
  double max_device_power_w = 0;
  double energy_j = 0;
  std::string energy_source;
  double energy_per_sample_j = 0;  // 0 when not every device could be measured
  double samples_per_joule = 0;
  double median_sm_clock_mhz = 0;
  double min_sm_clock_mhz = 0;
  double max_temperature_c = 0;
  std::vector<ThrottleShare> throttle_reasons;  // the largest share on any device
  std::vector<std::string> flags;
};

// The run's report from its devices' figures; `timed_samples`: samples (images, tokens) all
// devices processed in the timed windows together.
TelemetryReport combine_device_telemetry(std::vector<DeviceTelemetry> devices, double timed_samples,
                                         const std::string& source, int interval_ms);
TelemetryReport unavailable_telemetry(const std::string& reason, const std::string& source,
                                      int interval_ms);

void to_json(nlohmann::json& j, const DeviceTelemetry& device);
DeviceTelemetry device_telemetry_from_json(const nlohmann::json& j);  // throws UsageError
nlohmann::json telemetry_to_json(const TelemetryReport& report);
TelemetryReport telemetry_from_json(const nlohmann::json& j);  // null: unavailable, no reason

}  // namespace gpubench
