// The fixed 2-rank all-reduce curve the prediction tests compute against by hand: 100 us up to
// 4 KiB, then 1 ms more a MiB up to 2 MiB.
#pragma once

#include "features/parallelism/scaling/fabric.h"

namespace gpubench::testing {

inline Fabric measured_fabric() {
  MeasuredCurve curve;
  curve.file = "ar.json";
  curve.world_size = 2;
  curve.backend = "gloo";
  curve.bytes = {4096, 1 << 20, 2 << 20};
  curve.time_us = {100, 1100, 2100};
  Fabric fabric;
  fabric.label = "measured";
  fabric.measured = curve;
  return fabric;
}

}  // namespace gpubench::testing
