// The host's memory bandwidth, measured as STREAM's copy measures it: bytes read plus bytes
// written per second of a copy between two arrays larger than the caches, the best of a few
// after one that touches the pages. For the CPU's decode ceiling (docs/inference.md): no
// datasheet lists a VM's bandwidth. Uses LibTorch's intra-op threads, as the run does.
#pragma once

namespace gpubench {

inline constexpr long long kCopyBandwidthArrayBytes = 256LL << 20;  // each of the two arrays

// 0 where the host cannot give the arrays (the run then has no CPU ceiling, not a failure).
double measure_copy_bandwidth_gbs();

}  // namespace gpubench
