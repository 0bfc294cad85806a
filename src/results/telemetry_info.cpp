#include "results/telemetry_info.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "common/json_fields.h"
#include "results/json_block.h"
#include "results/statistics.h"

namespace gpubench {
namespace {

std::vector<ThrottleShare> largest_shares(const std::vector<DeviceTelemetry>& devices) {
  std::map<std::string, double> largest;
  for (const DeviceTelemetry& d : devices) {
    for (const ThrottleShare& t : d.throttle_reasons) {
      largest[t.reason] = std::max(largest[t.reason], t.share);
    }
  }
  std::vector<ThrottleShare> out;
  for (const auto& [reason, share] : largest) out.push_back({reason, share});
  return out;
}

nlohmann::json shares_to_json(const std::vector<ThrottleShare>& shares) {
  nlohmann::json out = nlohmann::json::object();
  for (const ThrottleShare& t : shares) out[t.reason] = t.share;
  return out;
}

std::vector<ThrottleShare> shares_from_json(const JsonFields& fields, const std::string& key) {
  std::vector<ThrottleShare> out;
  const nlohmann::json& raw = fields.raw(key);
  if (raw.is_null()) return out;
  const JsonFields shares = fields.object(key);
  for (const auto& item : raw.items()) {
    out.push_back({item.key(), shares.number(item.key(), 0, 0, 1)});
  }
  return out;
}

}  // namespace

TelemetryReport unavailable_telemetry(const std::string& reason, const std::string& source,
                                      int interval_ms) {
  TelemetryReport report;
  report.reason = reason;
  report.source = source;
  report.interval_ms = interval_ms;
  return report;
}

TelemetryReport combine_device_telemetry(std::vector<DeviceTelemetry> devices, double timed_samples,
                                         const std::string& source, int interval_ms) {
  TelemetryReport report = unavailable_telemetry("", source, interval_ms);
  std::sort(devices.begin(), devices.end(),
            [](const DeviceTelemetry& a, const DeviceTelemetry& b) { return a.rank < b.rank; });
  std::vector<double> medians;
  std::set<std::string> energy_sources, flags;
  bool every_device = true;
  for (const DeviceTelemetry& d : devices) {
    if (!d.available) {
      every_device = false;
      flags.insert("rank " + std::to_string(d.rank) + " has no telemetry: " + d.reason);
      if (report.reason.empty()) report.reason = d.reason;
      continue;
    }
    report.available = true;
    report.mean_power_w += d.mean_power_w;
    report.max_device_power_w = std::max(report.max_device_power_w, d.max_power_w);
    report.energy_j += d.energy_j;
    energy_sources.insert(d.energy_source);
    if (d.median_sm_clock_mhz > 0) medians.push_back(d.median_sm_clock_mhz);
    if (d.min_sm_clock_mhz > 0 &&
        (report.min_sm_clock_mhz == 0 || d.min_sm_clock_mhz < report.min_sm_clock_mhz)) {
      report.min_sm_clock_mhz = d.min_sm_clock_mhz;
    }
    report.max_temperature_c = std::max(report.max_temperature_c, d.max_temperature_c);
    for (const std::string& flag : d.flags) flags.insert(flag);
  }
  if (report.available) report.reason.clear();
  if (!medians.empty()) report.median_sm_clock_mhz = median(medians);
  report.energy_source = energy_sources.size() == 1 ? *energy_sources.begin()
                         : energy_sources.empty()   ? ""
                                                    : "mixed";
  if (report.available && every_device && report.energy_j > 0 && timed_samples > 0) {
    report.energy_per_sample_j = report.energy_j / timed_samples;
    report.samples_per_joule = timed_samples / report.energy_j;
  } else if (report.available) {
    flags.insert(every_device ? "energy per sample left out: no energy was measured"
                              : "energy per sample left out: not every device was measured");
  }
  report.throttle_reasons = largest_shares(devices);
  report.flags.assign(flags.begin(), flags.end());
  report.devices = std::move(devices);
  return report;
}

namespace {

template <typename Io, typename D>
void device_fields(Io& io, D& d) {
  io.text("device", d.device);
  io.integer("rank", d.rank, 0, 0, 1 << 20);
  io.flag("available", d.available);
  if (!d.available) {
    io.text("reason", d.reason);
    return;
  }
  io.integer("samples", d.samples);
  io.number("window_s", d.window_s);
  io.number("mean_power_w", d.mean_power_w);
  io.number("max_power_w", d.max_power_w);
  io.number("energy_j", d.energy_j);
  io.text("energy_source", d.energy_source);
  io.number("median_sm_clock_mhz", d.median_sm_clock_mhz);
  io.number("min_sm_clock_mhz", d.min_sm_clock_mhz);
  io.number("median_memory_clock_mhz", d.median_memory_clock_mhz);
  io.number("max_temperature_c", d.max_temperature_c, -273);
  io.integer("max_memory_used_bytes", d.max_memory_used_bytes);
  io.custom("throttle_reasons", d.throttle_reasons, shares_from_json, shares_to_json);
  io.number("power_limit_w", d.power_limit_w);
  io.number("max_sm_clock_mhz", d.max_sm_clock_mhz);
  io.number("applications_sm_clock_mhz", d.applications_sm_clock_mhz);
  io.text("persistence_mode", d.persistence_mode);
  io.texts("flags", d.flags);
}

// The run's summary over its devices (available telemetry only).
template <typename Io, typename R>
void summary_fields(Io& io, R& r) {
  io.number("mean_power_w", r.mean_power_w);
  io.number("max_device_power_w", r.max_device_power_w);
  io.number("energy_j", r.energy_j);
  io.text("energy_source", r.energy_source);
  io.number("energy_per_sample_j", r.energy_per_sample_j);
  io.number("samples_per_joule", r.samples_per_joule);
  io.number("median_sm_clock_mhz", r.median_sm_clock_mhz);
  io.number("min_sm_clock_mhz", r.min_sm_clock_mhz);
  io.number("max_temperature_c", r.max_temperature_c, -273);
  io.custom("throttle_reasons", r.throttle_reasons, shares_from_json, shares_to_json);
  io.texts("flags", r.flags);
}

}  // namespace

void to_json(nlohmann::json& j, const DeviceTelemetry& d) {
  j = write_block(device_fields<BlockWriter, const DeviceTelemetry>, d);
}

DeviceTelemetry device_telemetry_from_json(const nlohmann::json& j) {
  DeviceTelemetry d;
  read_block(JsonFields(j, "telemetry.devices[]"), device_fields<BlockReader, DeviceTelemetry>, d);
  return d;
}

nlohmann::json telemetry_to_json(const TelemetryReport& r) {
  nlohmann::json j = {{"available", r.available},
                      {"source", r.source},
                      {"interval_ms", r.interval_ms},
                      {"devices", r.devices}};
  if (!r.available) {
    j["reason"] = r.reason;
    return j;
  }
  j["summary"] = write_block(summary_fields<BlockWriter, const TelemetryReport>, r);
  return j;
}

TelemetryReport telemetry_from_json(const nlohmann::json& j) {
  const JsonFields f(j, "telemetry");
  TelemetryReport r;
  r.available = f.flag("available");
  r.reason = f.text("reason", j.is_null() ? "not recorded (a result from before telemetry)" : "");
  r.source = f.text("source", "none");
  r.interval_ms = static_cast<int>(f.integer("interval_ms", 0, 0, 1 << 20));
  const nlohmann::json& devices = f.raw("devices");
  if (devices.is_array()) {
    for (const nlohmann::json& d : devices) r.devices.push_back(device_telemetry_from_json(d));
  }
  read_block(f.object("summary"), summary_fields<BlockReader, TelemetryReport>, r);
  return r;
}

}  // namespace gpubench
