// The time of one all-reduce of a gradient bucket on a fabric, by the alpha-beta model NCCL's
// own tuner uses (docs/scaling.md, with the formulas and their sources): a latency per step of
// the algorithm plus the bytes each GPU's links carry over their bandwidth. Inside a node a ring
// (2(n-1) steps, 2(n-1)/n of the bytes); across nodes the hierarchical form (reduce-scatter in
// the node, all-reduce of each GPU's shard across the nodes by ring or tree, whichever is
// faster, all-gather in the node); or the measured curve of an allreduce file.
#pragma once

#include <cstdint>
#include <string>

#include "features/parallelism/scaling/fabric.h"

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

// An all-to-all in which each rank sends `bytes` spread evenly over the ranks, by the pairwise
// exchange's alpha-beta cost (Thakur, Rabenseifner and Gropp 2005, "Optimization of Collective
// Communication Operations in MPICH"): a step per peer, and the (p-1)/p of the bytes that leave
// the rank. Across nodes the share bound for other nodes crosses the node's NICs while the rest
// crosses the node's own links, at once. A measured all-reduce curve does not give it (UsageError).
CollectiveCost alltoall_cost(int64_t bytes, int gpus, int gpus_per_node, const Fabric& fabric);

}  // namespace gpubench
