// What can make timings noisy, read from a copy of /proc and /sys.
#include "system/timing_conditions.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace gpubench {
namespace {

class HostCopy {
 public:
  HostCopy()
      : root_(std::filesystem::temp_directory_path() /
              ("gpubench-timing-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "proc");
    std::filesystem::create_directories(root_ / "sys/devices/system/cpu/cpufreq");  // no CPU's
  }
  ~HostCopy() { std::filesystem::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(TimingConditions, FrequencyScalingAndOtherWorkAreEachALine) {
  HostCopy host;
  EXPECT_TRUE(timing_hazards(8, host.root()).empty()) << "a host that says nothing";
  host.write("proc/loadavg", "3.00 2.00 1.00 2/300 4242\n");
  host.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
  host.write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
  host.write("sys/devices/system/cpu/cpu12/cpufreq/scaling_governor", "powersave\n");
  const std::vector<std::string> hazards = timing_hazards(8, host.root());
  ASSERT_EQ(hazards.size(), 2u);
  EXPECT_NE(hazards[0].find("CPU frequency scaling is on (2 CPU(s) 'powersave')"),
            std::string::npos)
      << hazards[0];
  EXPECT_NE(hazards[1].find("the 1-minute load average is 3.00 on 8 logical CPUs"),
            std::string::npos)
      << hazards[1];
  // A load under a quarter of the CPUs is the run's own machine at rest.
  EXPECT_EQ(timing_hazards(16, host.root()).size(), 1u);
  host.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  host.write("sys/devices/system/cpu/cpu12/cpufreq/scaling_governor", "performance\n");
  EXPECT_TRUE(timing_hazards(16, host.root()).empty());
  // Under 1, never: one process of the machine's own.
  host.write("proc/loadavg", "0.90 0.50 0.20 1/100 7\n");
  EXPECT_TRUE(timing_hazards(2, host.root()).empty());
}

}  // namespace
}  // namespace gpubench
