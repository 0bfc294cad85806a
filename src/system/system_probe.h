// Reads this machine's environment into a result's system block.
#pragma once

#include <string>

#include "results/system_info.h"

namespace gpubench {

// This machine's host name ("unknown" when it cannot be read).
std::string read_hostname();

// The driver version in a line of /proc/driver/nvidia/version; empty if it has none.
std::string parse_nvidia_driver_version(const std::string& proc_line);

// "0000:19:00.0": CUDA device `index`'s PCI address, which NVML finds it by whatever
// CUDA_VISIBLE_DEVICES renumbers; empty without CUDA.
std::string cuda_pci_bus_id(int index);

// Reads the machine now, including the TF32 flags currently in force.
SystemInfo collect_system_info();

}  // namespace gpubench
