// GPU telemetry through NVML, loaded at run time (dlopen of libnvidia-ml.so.1, or the library
// GPUBENCH_NVML_LIBRARY names), so the same binary runs where there is no driver.
#pragma once

#include <string>

#include "telemetry/telemetry_source.h"

namespace gpubench {

// The device with this PCI bus id ("0000:19:00.0", what CUDA reports), or when the id is empty
// the device at `index` in NVML's order. No library, a missing required symbol or an NVML error
// gives no source and the reason.
OpenedSource open_nvml_source(const std::string& pci_bus_id, int index);

}  // namespace gpubench
