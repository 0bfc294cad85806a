#include "system/timing_conditions.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/text_table.h"

namespace gpubench {
namespace {

std::string first_word(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string word;
  file >> word;
  return word;
}

// Governors and how many CPUs have each, where cpufreq says.
std::map<std::string, int> governors(const std::string& root) {
  std::map<std::string, int> count;
  std::error_code error;
  const std::filesystem::path cpus = root + "/sys/devices/system/cpu";
  for (const auto& entry : std::filesystem::directory_iterator(cpus, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() == 3 ||
        !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const std::string governor = first_word(entry.path() / "cpufreq" / "scaling_governor");
    if (!governor.empty()) ++count[governor];
  }
  return count;
}

}  // namespace

std::vector<std::string> timing_hazards(unsigned logical_cpus, const std::string& root) {
  std::vector<std::string> hazards;
  std::string scaling;
  for (const auto& [governor, cpus] : governors(root)) {
    if (governor == "performance") continue;
    scaling += (scaling.empty() ? "" : ", ") + std::to_string(cpus) + " CPU(s) '" + governor + "'";
  }
  if (!scaling.empty()) {
    hazards.push_back("CPU frequency scaling is on (" + scaling +
                      "): the clock follows the load, so timings are noisier; the 'performance' "
                      "governor holds it (cpupower frequency-set -g performance)");
  }
  std::ifstream loadavg(root + "/proc/loadavg");
  double load = 0;
  if (loadavg >> load && logical_cpus > 0 &&
      load >= std::max(1.0, static_cast<double>(logical_cpus) / 4)) {
    hazards.push_back("the 1-minute load average is " + format_fixed(load, 2) + " on " +
                      std::to_string(logical_cpus) +
                      " logical CPUs before the run starts: other work shares the machine");
  }
  return hazards;
}

}  // namespace gpubench
