// What on this host can make timings noisy, warned of before a benchmark starts, as
// google/benchmark does: CPU frequency scaling, and other work already running.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

// A line for each: a cpufreq governor other than "performance" on any CPU (the clock then moves
// with the load, and the first steps run slower), and a 1-minute load average of at least a
// quarter of the `logical_cpus` and at least 1 (work the run shares the cores with). None where
// the host does not say: containers and VMs often have no cpufreq. `root`: where /proc and /sys
// are ("" the host's own; a test's copy).
std::vector<std::string> timing_hazards(unsigned logical_cpus, const std::string& root = "");

}  // namespace gpubench
