#include <algorithm>
#include <map>

#include "common/text_table.h"
#include "results/statistics.h"
#include "telemetry/telemetry_source.h"

namespace gpubench {
namespace {

// Power integrated over [start, end]: a trapezoid between samples, each end held flat to the
// window's edge.
std::optional<double> integrated_energy_j(const TelemetryWindow& window) {
  std::vector<std::pair<double, double>> points;
  for (const TelemetrySample& s : window.samples) {
    if (s.power_w) points.emplace_back(s.time_s, *s.power_w);
  }
  if (points.empty()) return std::nullopt;
  std::sort(points.begin(), points.end());
  double energy = points.front().second * std::max(0.0, points.front().first - window.start_s);
  for (size_t i = 1; i < points.size(); ++i) {
    energy +=
        0.5 * (points[i].second + points[i - 1].second) * (points[i].first - points[i - 1].first);
  }
  energy += points.back().second * std::max(0.0, window.end_s - points.back().first);
  return energy;
}

}  // namespace

const std::vector<std::pair<uint64_t, std::string>>& clock_event_reason_names() {
  static const std::vector<std::pair<uint64_t, std::string>> names = {
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal"},
      {0x40, "hw_thermal"},
      {0x80, "hw_power_brake"},
      {0x100, "display_clock_setting"}};
  return names;
}

std::vector<std::string> decode_clock_event_reasons(uint64_t mask) {
  std::vector<std::string> reasons;
  uint64_t known = 0;
  for (const auto& [bit, name] : clock_event_reason_names()) {
    known |= bit;
    if (mask & bit) reasons.push_back(name);
  }
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if ((mask & bit) && !(known & bit)) {
      char text[32];
      std::snprintf(text, sizeof text, "unknown_0x%llx", static_cast<unsigned long long>(bit));
      reasons.push_back(text);
    }
  }
  return reasons;
}

DeviceTelemetry summarize_windows(const std::vector<TelemetryWindow>& windows) {
  DeviceTelemetry d;
  d.available = true;
  std::vector<double> sm_clocks, memory_clocks;
  std::map<std::string, int64_t> reason_counts;
  int64_t reason_samples = 0;
  double counter_j = 0, integrated_j = 0, shortest = 0;
  bool counter_everywhere = !windows.empty(), integrated_everywhere = !windows.empty();
  for (const TelemetryWindow& w : windows) {
    const double length = w.end_s - w.start_s;
    d.window_s += length;
    shortest = shortest == 0 ? length : std::min(shortest, length);
    if (w.energy_start_j && w.energy_end_j && *w.energy_end_j >= *w.energy_start_j) {
      counter_j += *w.energy_end_j - *w.energy_start_j;
    } else {
      counter_everywhere = false;
    }
    const auto integrated = integrated_energy_j(w);
    if (integrated) {
      integrated_j += *integrated;
    } else {
      integrated_everywhere = false;
    }
    for (const TelemetrySample& s : w.samples) {
      ++d.samples;
      if (s.power_w) d.max_power_w = std::max(d.max_power_w, *s.power_w);
      if (s.sm_clock_mhz) sm_clocks.push_back(*s.sm_clock_mhz);
      if (s.memory_clock_mhz) memory_clocks.push_back(*s.memory_clock_mhz);
      if (s.temperature_c) d.max_temperature_c = std::max(d.max_temperature_c, *s.temperature_c);
      if (s.memory_used_bytes) {
        d.max_memory_used_bytes = std::max(d.max_memory_used_bytes, *s.memory_used_bytes);
      }
      if (s.clock_event_reasons) {
        ++reason_samples;
        for (const std::string& reason : decode_clock_event_reasons(*s.clock_event_reasons)) {
          ++reason_counts[reason];
        }
      }
    }
  }
  if (counter_everywhere && counter_j > 0) {
    d.energy_j = counter_j;
    d.energy_source = "energy counter";
  } else if (integrated_everywhere) {
    d.energy_j = integrated_j;
    d.energy_source = "integrated power";
    if (counter_everywhere) {
      d.flags.push_back("the energy counter did not move over " + format_fixed(d.window_s, 2) +
                        " s; energy integrated from power samples");
    }
  } else {
    d.energy_source = "none";
    d.flags.push_back("neither an energy counter nor power samples in every window");
  }
  if (d.window_s > 0) d.mean_power_w = d.energy_j / d.window_s;
  if (!sm_clocks.empty()) {
    d.median_sm_clock_mhz = median(sm_clocks);
    d.min_sm_clock_mhz = *std::min_element(sm_clocks.begin(), sm_clocks.end());
  }
  if (!memory_clocks.empty()) d.median_memory_clock_mhz = median(memory_clocks);
  for (const auto& [reason, count] : reason_counts) {
    d.throttle_reasons.push_back({reason, static_cast<double>(count) / reason_samples});
  }
  if (!windows.empty() && shortest < kShortestTrustedWindowSeconds) {
    d.flags.push_back("a timed window lasted " + format_fixed(shortest, 3) + " s, under " +
                      format_fixed(kShortestTrustedWindowSeconds, 0) +
                      " s: power is averaged over about 1 s (Ampere and newer) and the energy "
                      "counter updates every 20-100 ms, so energy and power here are rough");
  }
  return d;
}

}  // namespace gpubench
