// CPU package energy from the kernel's RAPL counters (/sys/class/powercap/intel-rapl:N, or the
// folder GPUBENCH_POWERCAP_ROOT names). Since 2020 kernels let only root read them, so on most
// machines this says why it has no figures.
#pragma once

#include "telemetry/telemetry_source.h"

namespace gpubench {

OpenedSource open_rapl_source();

}  // namespace gpubench
