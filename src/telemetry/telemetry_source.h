// A device whose power, clocks and energy can be read (NVML for a GPU, RAPL for the CPU), and
// what a timed window of readings looks like.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/telemetry_info.h"

namespace gpubench {

// Seconds on the steady clock: the time base of samples and windows.
inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct TelemetrySample {
  double time_s = 0;  // steady clock
  std::optional<double> power_w;
  std::optional<double> sm_clock_mhz;
  std::optional<double> memory_clock_mhz;
  std::optional<double> temperature_c;
  std::optional<int64_t> memory_used_bytes;
  std::optional<uint64_t> clock_event_reasons;  // NVML's bitmask
};

struct TelemetryWindow {
  double start_s = 0, end_s = 0;
  std::optional<double> energy_start_j, energy_end_j;  // the device's cumulative counter
  std::vector<TelemetrySample> samples;
};

class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;
  virtual std::string device() const = 0;
  virtual TelemetrySample sample() = 0;  // time_s is the recorder's
  // A window starts: a source that derives power from its previous reading starts afresh, so
  // that no sample spans the untimed gap between windows.
  virtual void window_started() {}
  // The cumulative energy counter in joules; nothing where the device has none.
  virtual std::optional<double> energy_j() = 0;
  // What is read once per run: power limit, maximum and application clocks, persistence mode.
  virtual void describe(DeviceTelemetry& into) = 0;
};

// A source, or why there is none ("no libnvidia-ml.so.1: ...").
struct OpenedSource {
  std::unique_ptr<TelemetrySource> source;
  std::string reason;
};

// Windows shorter than this are flagged: Ampere and newer report power averaged over a second,
// and the energy counter updates every 20-100 ms.
inline constexpr double kShortestTrustedWindowSeconds = 1.0;

// The names of NVML's clock-event (throttle) reason bits, lowest bit first.
const std::vector<std::pair<uint64_t, std::string>>& clock_event_reason_names();
// "sw_power_cap", or "unknown_0x200" for a bit NVML added later.
std::vector<std::string> decode_clock_event_reasons(uint64_t mask);

// The device's figures from its windows: energy from the counter where it moved, else integrated
// power; a trapezoid over each window's samples.
DeviceTelemetry summarize_windows(const std::vector<TelemetryWindow>& windows);

}  // namespace gpubench
