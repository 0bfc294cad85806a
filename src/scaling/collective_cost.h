// The time of one all-reduce of a gradient bucket on a fabric, by the alpha-beta model NCCL's
// own tuner uses (docs/scaling.md, with the formulas and their sources): a latency per step of
// the algorithm plus the bytes each GPU's links carry over their bandwidth. Inside a node a ring
// (2(n-1) steps, 2(n-1)/n of the bytes); across nodes the hierarchical form (reduce-scatter in
// the node, all-reduce of each GPU's shard across the nodes by ring or tree, whichever is
// faster, all-gather in the node); or the measured curve of an allreduce file.
#pragma once

#include <cstdint>
#include <string>

#include "scaling/fabric.h"

namespace gpubench {

// NCCL's base latency of a ring all-reduce, Simple protocol (baseLat in src/graph/tuning.cc).
inline constexpr double kRingBaseLatencyUs = 8.4;

struct CollectiveCost {
  double latency_us = 0;    // the alpha terms
  double bandwidth_us = 0;  // the bytes over bandwidth terms
  double total_us() const { return latency_us + bandwidth_us; }
  std::string algorithm;  // "ring", "hierarchical ring", "hierarchical tree", "measured"
};

// `gpus` ranks, `gpus_per_node` of them a node (the last node may hold fewer).
CollectiveCost allreduce_cost(int64_t bytes, int gpus, int gpus_per_node, const Fabric& fabric);

}  // namespace gpubench
