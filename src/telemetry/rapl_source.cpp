#include "telemetry/rapl_source.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/input_limits.h"

namespace gpubench {
namespace {

namespace fs = std::filesystem;

struct Domain {
  fs::path energy_file;
  double range_j = 0;  // where the counter wraps
  double last_raw_j = 0;
  double total_j = 0;  // since the source opened, wraps unfolded
};

// A counter file's value in joules; throws std::runtime_error naming the file and the errno.
double read_microjoules(const fs::path& file) {
  std::ifstream in(file);
  unsigned long long value = 0;
  if (!in || !(in >> value)) {
    throw std::runtime_error("cannot read " + echoed(file.string()) + ": " +
                             (errno != 0 ? std::strerror(errno) : "not a number") +
                             " (RAPL counters are readable by root only on most kernels)");
  }
  return static_cast<double>(value) * 1e-6;
}

class RaplSource : public TelemetrySource {
 public:
  explicit RaplSource(const fs::path& root) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root, error)) {
      const std::string name = entry.path().filename().string();
      // Packages only (intel-rapl:0), not their sub-domains (intel-rapl:0:0), which they include.
      if (name.rfind("intel-rapl:", 0) != 0 || name.find(':', 11) != std::string::npos) continue;
      Domain domain;
      domain.energy_file = entry.path() / "energy_uj";
      errno = 0;
      domain.last_raw_j = read_microjoules(domain.energy_file);
      errno = 0;
      domain.range_j = read_microjoules(entry.path() / "max_energy_range_uj");
      domains_.push_back(domain);
    }
    if (error || domains_.empty()) {
      throw std::runtime_error("no RAPL package domains under " + echoed(root.string()) +
                               " (not an Intel/AMD CPU with powercap, or a container that "
                               "hides it)");
    }
    last_time_s_ = steady_seconds();
  }

  std::string device() const override {
    return "cpu: " + std::to_string(domains_.size()) + " package(s) (RAPL)";
  }

  std::optional<double> energy_j() override {
    double total = 0;
    for (Domain& d : domains_) {
      errno = 0;
      const double raw = read_microjoules(d.energy_file);
      d.total_j += raw >= d.last_raw_j ? raw - d.last_raw_j : raw + d.range_j - d.last_raw_j;
      d.last_raw_j = raw;
      total += d.total_j;
    }
    return total;
  }

  void window_started() override { have_last_ = false; }

  // Power from the energy counter between this sample and the last of the same window.
  TelemetrySample sample() override {
    TelemetrySample s;
    const double energy = *energy_j();
    const double time = steady_seconds();
    if (time > last_time_s_ && have_last_)
      s.power_w = (energy - last_energy_j_) / (time - last_time_s_);
    last_energy_j_ = energy;
    last_time_s_ = time;
    have_last_ = true;
    return s;
  }

  void describe(DeviceTelemetry& into) override {
    into.flags.push_back(
        "RAPL package energy covers the whole CPU package: every process on it, not only "
        "gpubench");
  }

 private:
  std::vector<Domain> domains_;
  double last_energy_j_ = 0, last_time_s_ = 0;
  bool have_last_ = false;
};

}  // namespace

OpenedSource open_rapl_source() {
  const char* configured = std::getenv("GPUBENCH_POWERCAP_ROOT");
  const fs::path root =
      configured != nullptr && *configured != '\0' ? configured : "/sys/class/powercap";
  try {
    return {std::make_unique<RaplSource>(root), ""};
  } catch (const std::exception& error) {
    return {nullptr, error.what()};
  }
}

}  // namespace gpubench
