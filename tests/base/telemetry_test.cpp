// Telemetry: the window summary on hand-made readings, NVML through the real dlopen path against
// the stand-in library (tests/fakes/fake_nvml.cpp), RAPL against a made-up powercap folder, the
// run's report over devices, and the result block both ways.
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "results/telemetry_info.h"
#include "telemetry/nvml_source.h"
#include "telemetry/rapl_source.h"
#include "telemetry/telemetry_recorder.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::ScratchDirectory;

// Sets environment variables for one test and restores them after.
class ScopedEnvironment {
 public:
  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TelemetrySample power_sample(double time, double watts) {
  TelemetrySample s;
  s.time_s = time;
  s.power_w = watts;
  return s;
}

double share_of(const std::vector<ThrottleShare>& shares, const std::string& reason) {
  for (const ThrottleShare& t : shares) {
    if (t.reason == reason) return t.share;
  }
  return -1;
}

TEST(TelemetrySummary, EnergyComesFromTheCounterWhereItMoved) {
  TelemetryWindow w{10.0, 12.0, 1000.0, 1700.0, {power_sample(10.0, 300), power_sample(12.0, 400)}};
  const DeviceTelemetry d = summarize_windows({w});
  EXPECT_EQ(d.energy_source, "energy counter");
  EXPECT_DOUBLE_EQ(d.energy_j, 700.0);
  EXPECT_DOUBLE_EQ(d.mean_power_w, 350.0);  // 700 J over 2 s
  EXPECT_DOUBLE_EQ(d.max_power_w, 400.0);
  EXPECT_EQ(d.samples, 2);
  EXPECT_TRUE(d.flags.empty());
}

TEST(TelemetrySummary, WithoutACounterPowerIsIntegratedOverTheWholeWindow) {
  // Trapezoid 1..3 s: (200 + 400) / 2 x 2 = 600 J; held flat 0..1 s (200 J) and 3..4 s (400 J).
  TelemetryWindow w{
      0.0, 4.0, std::nullopt, std::nullopt, {power_sample(1.0, 200), power_sample(3.0, 400)}};
  const DeviceTelemetry d = summarize_windows({w});
  EXPECT_EQ(d.energy_source, "integrated power");
  EXPECT_DOUBLE_EQ(d.energy_j, 1200.0);
  EXPECT_DOUBLE_EQ(d.mean_power_w, 300.0);
}

TEST(TelemetrySummary, ACounterThatDoesNotMoveFallsBackToPowerAndSaysSo) {
  TelemetryWindow w{0.0, 2.0, 5000.0, 5000.0, {power_sample(0.0, 100), power_sample(2.0, 100)}};
  const DeviceTelemetry d = summarize_windows({w});
  EXPECT_EQ(d.energy_source, "integrated power");
  EXPECT_DOUBLE_EQ(d.energy_j, 200.0);
  ASSERT_EQ(d.flags.size(), 1u);
  EXPECT_NE(d.flags[0].find("did not move"), std::string::npos);
}

TEST(TelemetrySummary, ShortWindowsAreFlagged) {
  TelemetryWindow w{0.0, 0.25, 0.0, 50.0, {power_sample(0.0, 200)}};
  const DeviceTelemetry d = summarize_windows({w});
  ASSERT_EQ(d.flags.size(), 1u);
  EXPECT_NE(d.flags[0].find("0.250 s, under 1 s"), std::string::npos) << d.flags[0];
}

TEST(TelemetrySummary, ClocksAndThrottleReasonsOverTheSamples) {
  TelemetryWindow w{0.0, 2.0, 0.0, 10.0, {}};
  const std::vector<std::pair<double, uint64_t>> readings = {
      {1980, 0x0}, {1755, 0x4}, {1500, 0x4 | 0x20}, {1980, 0x0}};
  for (const auto& [clock, reasons] : readings) {
    TelemetrySample s;
    s.sm_clock_mhz = clock;
    s.clock_event_reasons = reasons;
    s.temperature_c = 70;
    w.samples.push_back(s);
  }
  const DeviceTelemetry d = summarize_windows({w});
  EXPECT_DOUBLE_EQ(d.median_sm_clock_mhz, 1867.5);
  EXPECT_DOUBLE_EQ(d.min_sm_clock_mhz, 1500);
  EXPECT_DOUBLE_EQ(share_of(d.throttle_reasons, "sw_power_cap"), 0.5);
  EXPECT_DOUBLE_EQ(share_of(d.throttle_reasons, "sw_thermal"), 0.25);
  EXPECT_DOUBLE_EQ(share_of(d.throttle_reasons, "hw_slowdown"), -1);  // never active: not listed
}

TEST(TelemetrySummary, ReasonBitsDecodeByName) {
  EXPECT_EQ(
      decode_clock_event_reasons(0x4 | 0x8 | 0x40 | 0x80),
      (std::vector<std::string>{"sw_power_cap", "hw_slowdown", "hw_thermal", "hw_power_brake"}));
  EXPECT_EQ(decode_clock_event_reasons(0x200), std::vector<std::string>{"unknown_0x200"});
  EXPECT_TRUE(decode_clock_event_reasons(0).empty());
}

// `windows` windows through the recorder from an opened source (the caller asserts it opened).
DeviceTelemetry recorded(OpenedSource opened, int windows) {
  TelemetryRecorder recorder(std::move(opened.source), std::chrono::milliseconds(5));
  for (int i = 0; i < windows; ++i) {
    recorder.begin_window();
    recorder.end_window();
  }
  return recorder.summary();
}

// Two windows: the counter advances 1000 mJ per read, and it is read at each edge.
TEST(NvmlTelemetry, ReadsTheStandInLibraryThroughDlopen) {
  ScopedEnvironment env;
  env.set("GPUBENCH_NVML_LIBRARY", FAKE_NVML_LIBRARY);
  env.set("FAKE_NVML_POWER_MW", "250000,350000");
  env.set("FAKE_NVML_REASONS", "0x4");
  OpenedSource opened = open_nvml_source("", 0);
  ASSERT_TRUE(opened.source) << opened.reason;
  EXPECT_EQ(opened.source->device(), "cuda:0 Fake GPU");
  const DeviceTelemetry d = recorded(std::move(opened), 2);
  EXPECT_TRUE(d.available);
  EXPECT_EQ(d.energy_source, "energy counter");
  EXPECT_DOUBLE_EQ(d.energy_j, 2.0);
  EXPECT_GE(d.samples, 4);  // one at each edge, at least
  EXPECT_DOUBLE_EQ(d.max_power_w, 350.0);
  EXPECT_DOUBLE_EQ(d.median_sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(d.median_memory_clock_mhz, 2619);
  EXPECT_DOUBLE_EQ(d.max_temperature_c, 61);
  EXPECT_EQ(d.max_memory_used_bytes, int64_t{1} << 30);
  EXPECT_DOUBLE_EQ(share_of(d.throttle_reasons, "sw_power_cap"), 1.0);
  EXPECT_DOUBLE_EQ(d.power_limit_w, 700);
  EXPECT_DOUBLE_EQ(d.max_sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(d.applications_sm_clock_mhz, 0);  // not supported: left out
  EXPECT_EQ(d.persistence_mode, "enabled");
}

TEST(NvmlTelemetry, WithoutAnEnergyCounterPowerIsIntegrated) {
  ScopedEnvironment env;
  env.set("GPUBENCH_NVML_LIBRARY", FAKE_NVML_LIBRARY);
  env.set("FAKE_NVML_ENERGY_STEP", "none");
  env.set("FAKE_NVML_POWER_MW", "300000");
  OpenedSource opened = open_nvml_source("0000:19:00.0", 0);
  ASSERT_TRUE(opened.source) << opened.reason;
  EXPECT_EQ(opened.source->energy_j(), std::nullopt);
  const DeviceTelemetry d = recorded(std::move(opened), 1);
  EXPECT_EQ(d.energy_source, "integrated power");
  EXPECT_NEAR(d.energy_j, 300.0 * d.window_s, 1e-9);
  EXPECT_NEAR(d.mean_power_w, 300.0, 1e-9);
}

TEST(NvmlTelemetry, ACounterThatDoesNotMoveIsFlagged) {
  ScopedEnvironment env;
  env.set("GPUBENCH_NVML_LIBRARY", FAKE_NVML_LIBRARY);
  env.set("FAKE_NVML_ENERGY_STEP", "0");
  OpenedSource opened = open_nvml_source("", 0);
  ASSERT_TRUE(opened.source) << opened.reason;
  const DeviceTelemetry d = recorded(std::move(opened), 1);
  EXPECT_EQ(d.energy_source, "integrated power");
  bool flagged = false;
  for (const std::string& flag : d.flags)
    flagged = flagged || flag.find("did not move") != std::string::npos;
  EXPECT_TRUE(flagged);
}

TEST(NvmlTelemetry, AMissingLibraryOrSymbolOrDriverGivesAReasonNotAFailure) {
  ScopedEnvironment env;
  env.set("GPUBENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  OpenedSource missing = open_nvml_source("", 0);
  EXPECT_FALSE(missing.source);
  EXPECT_NE(missing.reason.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << missing.reason;

  env.set("GPUBENCH_NVML_LIBRARY", FAKE_NVML_WITHOUT_POWER_LIBRARY);
  OpenedSource no_symbol = open_nvml_source("", 0);
  EXPECT_FALSE(no_symbol.source);
  EXPECT_NE(no_symbol.reason.find("has no nvmlDeviceGetPowerUsage"), std::string::npos)
      << no_symbol.reason;

  env.set("GPUBENCH_NVML_LIBRARY", FAKE_NVML_LIBRARY);
  env.set("FAKE_NVML_INIT_ERROR", "9");
  OpenedSource no_driver = open_nvml_source("", 0);
  EXPECT_FALSE(no_driver.source);
  EXPECT_EQ(no_driver.reason, "nvmlInit_v2 failed: Driver Not Loaded");
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(RaplTelemetry, SumsPackagesAndUnfoldsAWrappedCounter) {
  ScratchDirectory root("powercap");
  write_file(std::filesystem::path(root.path()) / "intel-rapl:0/energy_uj", "1000000\n");
  write_file(std::filesystem::path(root.path()) / "intel-rapl:0/max_energy_range_uj", "10000000\n");
  write_file(std::filesystem::path(root.path()) / "intel-rapl:0:0/energy_uj",
             "555\n");  // a sub-domain: ignored
  write_file(std::filesystem::path(root.path()) / "intel-rapl:0:0/max_energy_range_uj",
             "10000000\n");
  write_file(std::filesystem::path(root.path()) / "intel-rapl:1/energy_uj", "0\n");
  write_file(std::filesystem::path(root.path()) / "intel-rapl:1/max_energy_range_uj", "10000000\n");
  ScopedEnvironment env;
  env.set("GPUBENCH_POWERCAP_ROOT", root.path());
  OpenedSource opened = open_rapl_source();
  ASSERT_TRUE(opened.source) << opened.reason;
  EXPECT_EQ(opened.source->device(), "cpu: 2 package(s) (RAPL)");
  EXPECT_DOUBLE_EQ(*opened.source->energy_j(), 0.0);
  write_file(std::filesystem::path(root.path()) / "intel-rapl:0/energy_uj", "4000000\n");  // +3 J
  write_file(std::filesystem::path(root.path()) / "intel-rapl:1/energy_uj", "500000\n");   // +0.5 J
  EXPECT_DOUBLE_EQ(*opened.source->energy_j(), 3.5);
  write_file(std::filesystem::path(root.path()) / "intel-rapl:0/energy_uj",
             "1000000\n");  // wrapped: +7 J
  EXPECT_DOUBLE_EQ(*opened.source->energy_j(), 10.5);
}

// Power comes from counter differences within a window: a window's first sample has none, so no
// sample spans the untimed gap before it.
TEST(RaplTelemetry, PowerIsDerivedWithinAWindowOnly) {
  ScratchDirectory root("powercap-windows");
  const std::filesystem::path package = std::filesystem::path(root.path()) / "intel-rapl:0";
  write_file(package / "energy_uj", "0\n");
  write_file(package / "max_energy_range_uj", "10000000\n");
  ScopedEnvironment env;
  env.set("GPUBENCH_POWERCAP_ROOT", root.path());
  OpenedSource opened = open_rapl_source();
  ASSERT_TRUE(opened.source) << opened.reason;
  TelemetrySource& source = *opened.source;
  source.window_started();
  EXPECT_FALSE(source.sample().power_w);
  write_file(package / "energy_uj", "5000000\n");  // +5 J within the window
  const auto power = source.sample().power_w;
  ASSERT_TRUE(power);
  EXPECT_GT(*power, 0);
  write_file(package / "energy_uj", "9000000\n");  // between windows
  source.window_started();
  EXPECT_FALSE(source.sample().power_w);
}

TEST(RaplTelemetry, NoPowercapGivesAReason) {
  ScratchDirectory root("empty-powercap");
  ScopedEnvironment env;
  env.set("GPUBENCH_POWERCAP_ROOT", root.path());
  const OpenedSource opened = open_rapl_source();
  EXPECT_FALSE(opened.source);
  EXPECT_NE(opened.reason.find("no RAPL package domains"), std::string::npos) << opened.reason;
}

DeviceTelemetry measured_device(int rank, double energy, double power, double clock) {
  DeviceTelemetry d;
  d.rank = rank;
  d.available = true;
  d.energy_j = energy;
  d.energy_source = "energy counter";
  d.mean_power_w = power;
  d.max_power_w = power + 10;
  d.median_sm_clock_mhz = clock;
  d.min_sm_clock_mhz = clock - 100;
  d.throttle_reasons = {{"sw_power_cap", 0.1 * rank}};
  return d;
}

TEST(TelemetryReport, SumsEnergyOverDevicesAndDividesBySamples) {
  const TelemetryReport r = combine_device_telemetry(
      {measured_device(1, 300, 250, 1800), measured_device(0, 100, 200, 1900)}, 800, "nvml", 100);
  EXPECT_TRUE(r.available);
  EXPECT_EQ(r.devices.front().rank, 0);  // in rank order
  EXPECT_DOUBLE_EQ(r.energy_j, 400);
  EXPECT_DOUBLE_EQ(r.energy_per_sample_j, 0.5);
  EXPECT_DOUBLE_EQ(r.samples_per_joule, 2.0);
  EXPECT_DOUBLE_EQ(r.mean_power_w, 450);
  EXPECT_DOUBLE_EQ(r.max_device_power_w, 260);
  EXPECT_DOUBLE_EQ(r.median_sm_clock_mhz, 1850);
  EXPECT_DOUBLE_EQ(r.min_sm_clock_mhz, 1700);
  EXPECT_DOUBLE_EQ(share_of(r.throttle_reasons, "sw_power_cap"), 0.1);
  EXPECT_EQ(r.energy_source, "energy counter");
}

TEST(TelemetryReport, AnUnmeasuredDeviceLeavesEnergyPerSampleOut) {
  DeviceTelemetry lost;
  lost.rank = 1;
  lost.reason = "cannot load libnvidia-ml.so.1";
  const TelemetryReport r =
      combine_device_telemetry({measured_device(0, 100, 200, 1900), lost}, 800, "nvml", 100);
  EXPECT_TRUE(r.available);
  EXPECT_DOUBLE_EQ(r.energy_per_sample_j, 0);
  EXPECT_NE(nlohmann::json(r.flags).dump().find("rank 1 has no telemetry"), std::string::npos);
}

TEST(TelemetryReport, NoEnergyOnMeasuredDevicesIsNamedAsSuch) {
  const TelemetryReport r =
      combine_device_telemetry({measured_device(0, 0, 0, 1900)}, 800, "rapl", 100);
  EXPECT_DOUBLE_EQ(r.energy_per_sample_j, 0);
  EXPECT_EQ(r.flags,
            std::vector<std::string>{"energy per sample left out: no energy was measured"});
}

TEST(TelemetryReport, RoundTripsThroughJson) {
  const TelemetryReport r = combine_device_telemetry(
      {measured_device(0, 100, 200, 1900), measured_device(1, 300, 250, 1800)}, 800, "nvml", 50);
  const TelemetryReport back = telemetry_from_json(telemetry_to_json(r));
  EXPECT_EQ(telemetry_to_json(back), telemetry_to_json(r));
  const TelemetryReport none = telemetry_from_json(
      telemetry_to_json(unavailable_telemetry("no RAPL package domains", "rapl", 100)));
  EXPECT_FALSE(none.available);
  EXPECT_EQ(none.reason, "no RAPL package domains");
  EXPECT_EQ(telemetry_from_json(nullptr).reason, "not recorded (a result from before telemetry)");
}

TEST(TelemetryReport, ACorruptBlockIsOneClearError) {
  nlohmann::json block = telemetry_to_json(unavailable_telemetry("x", "nvml", 100));
  block["devices"] = {{{"rank", 0}, {"available", true}, {"energy_j", "lots"}}};
  const std::string message = testing::usage_error_of([&] { telemetry_from_json(block); });
  EXPECT_NE(message.find("energy_j must be a finite number"), std::string::npos) << message;
}

// A CPU run with a readable (made-up) powercap folder records its energy; the run succeeds
// either way.
TEST(TelemetryEndToEnd, ACpuRunRecordsRaplEnergyOrWhyNot) {
  ScratchDirectory scratch("rapl-run");
  write_file(std::filesystem::path(scratch.path()) / "powercap/intel-rapl:0/energy_uj", "1000\n");
  write_file(std::filesystem::path(scratch.path()) / "powercap/intel-rapl:0/max_energy_range_uj",
             "262143328850\n");
  const std::string out = scratch.path() + "/r.json";
  const std::string args =
      "train --model test-tiny-cnn --device cpu --steps 2 --warmup-steps 1 "
      "--repeat 1 --output " +
      out;
  auto run = testing::run_command("GPUBENCH_POWERCAP_ROOT=" + scratch.path() + "/powercap" + " " +
                                  GPUBENCH_BINARY + " " + args);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json telemetry = testing::read_json(out)["telemetry"];
  EXPECT_EQ(telemetry["available"], true) << telemetry;
  EXPECT_EQ(telemetry["source"], "rapl");
  EXPECT_EQ(telemetry["devices"][0]["device"], "cpu: 1 package(s) (RAPL)");
  // The made-up counter never moves: 0 J from the power it implies, and a flag saying so.
  EXPECT_EQ(telemetry["summary"]["energy_source"], "integrated power");
  EXPECT_EQ(telemetry["devices"][0]["energy_j"], 0.0);
  EXPECT_NE(telemetry["summary"]["flags"].dump().find("did not move"), std::string::npos);

  run = testing::run_command("GPUBENCH_POWERCAP_ROOT=/nonexistent " + std::string(GPUBENCH_BINARY) +
                             " " + args + " --telemetry-interval-ms 20");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json none = testing::read_json(out)["telemetry"];
  EXPECT_EQ(none["available"], false);
  EXPECT_EQ(none["interval_ms"], 20);
  EXPECT_NE(none["reason"].get<std::string>().find("no RAPL package domains"), std::string::npos);
  const nlohmann::json datasheet = testing::read_json(out)["datasheet"];
  EXPECT_EQ(datasheet["matched"], false);
  EXPECT_EQ(datasheet["reason"], "CPU run: the database lists accelerators only");
}

}  // namespace
}  // namespace gpubench
