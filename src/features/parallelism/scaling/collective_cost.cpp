#include "features/parallelism/scaling/collective_cost.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"

namespace gpubench {
namespace {

// Bytes over GB/s, in microseconds (1 GB/s = 1e3 bytes a microsecond).
double transfer_us(double bytes, double gbs) {
  return bytes / (gbs * 1e3);
}

double ring_factor(int ranks) {
  return 2.0 * (ranks - 1) / ranks;
}

// The measured time at the curve's world size: linear between the sizes it measured, the
// smallest size's time below them, its largest size's bus bandwidth above them.
double measured_time_us(const MeasuredCurve& curve, int64_t bytes) {
  const auto& b = curve.bytes;
  if (bytes <= b.front()) return curve.time_us.front();
  if (bytes >= b.back()) {
    return curve.time_us.back() * static_cast<double>(bytes) / static_cast<double>(b.back());
  }
  const size_t hi = static_cast<size_t>(std::upper_bound(b.begin(), b.end(), bytes) - b.begin());
  const size_t lo = hi - 1;
  const double t = static_cast<double>(bytes - b[lo]) / static_cast<double>(b[hi] - b[lo]);
  return curve.time_us[lo] + t * (curve.time_us[hi] - curve.time_us[lo]);
}

CollectiveCost measured_cost(const MeasuredCurve& curve, int64_t bytes, int gpus) {
  // Another world size at the same bus bandwidth: the bytes each rank moves scale by the ring
  // factor; the latency (the smallest message's time) is kept as measured.
  const double scale = ring_factor(gpus) / ring_factor(curve.world_size);
  const double floor_us = curve.time_us.front();
  const double at_world = measured_time_us(curve, bytes);
  CollectiveCost cost;
  cost.algorithm = "measured";
  cost.latency_us = floor_us;
  cost.bandwidth_us = std::max(0.0, at_world - floor_us) * scale;
  return cost;
}

}  // namespace

CollectiveCost allreduce_cost(int64_t bytes, int gpus, int gpus_per_node, const Fabric& fabric) {
  CollectiveCost cost;
  if (gpus <= 1 || bytes <= 0) return cost;
  if (fabric.measured) return measured_cost(*fabric.measured, bytes, gpus);
  const double s = static_cast<double>(bytes);
  const LinkFigures& intra = fabric.intra;
  cost.latency_us = kRingBaseLatencyUs;
  if (gpus <= gpus_per_node) {
    cost.algorithm = "ring";
    cost.latency_us += 2.0 * (gpus - 1) * intra.ring_latency_us;
    cost.bandwidth_us = transfer_us(s * ring_factor(gpus), intra.bandwidth_gbs);
    return cost;
  }
  if (!fabric.inter) {
    throw UsageError(std::to_string(gpus) + " GPUs span nodes of " + std::to_string(gpus_per_node) +
                     " and the fabric '" + fabric.label +
                     "' names no network: add inter=... (e.g. inter=ib400x8)");
  }
  const LinkFigures& net = *fabric.inter;
  const int local = gpus_per_node;
  const int nodes = (gpus + local - 1) / local;
  // Reduce-scatter and all-gather inside the node, each (g-1)/g of the bytes in g-1 steps.
  const double in_node_us = transfer_us(s * (local - 1) / local, intra.bandwidth_gbs);
  cost.latency_us += 2.0 * (local - 1) * intra.ring_latency_us;
  cost.bandwidth_us += 2.0 * in_node_us;
  // Each GPU's shard all-reduced across the nodes over its share of the node's NICs.
  const double shard = s / local;
  const int nics = fabric.nics_per_node > 0 ? fabric.nics_per_node : local;
  const double nic_gbs = net.bandwidth_gbs * std::min(1.0, static_cast<double>(nics) / local);
  const double ring_latency = 2.0 * (nodes - 1) * net.ring_latency_us;
  const double ring_bandwidth = transfer_us(shard * ring_factor(nodes), nic_gbs);
  // NCCL's tree: 2 log2(nodes) steps up and down, the bytes at half the bus bandwidth.
  const double tree_latency = 2.0 * std::ceil(std::log2(nodes)) * net.tree_latency_us;
  const double tree_bandwidth = transfer_us(2.0 * shard, nic_gbs);
  if (tree_latency + tree_bandwidth < ring_latency + ring_bandwidth) {
    cost.algorithm = "hierarchical tree";
    cost.latency_us += tree_latency;
    cost.bandwidth_us += tree_bandwidth;
  } else {
    cost.algorithm = "hierarchical ring";
    cost.latency_us += ring_latency;
    cost.bandwidth_us += ring_bandwidth;
  }
  return cost;
}

CollectiveCost alltoall_cost(int64_t bytes, int gpus, int gpus_per_node, const Fabric& fabric) {
  CollectiveCost cost;
  if (gpus <= 1 || bytes <= 0) return cost;
  if (fabric.measured) {
    throw UsageError("the fabric '" + fabric.label +
                     "' is a measured all-reduce curve, which does not give an all-to-all's "
                     "cost; give its links (e.g. intra=nvlink4,inter=ib400x8)");
  }
  const double s = static_cast<double>(bytes);
  const int local = std::min(gpus, gpus_per_node);
  cost.algorithm = "pairwise";
  cost.latency_us = kRingBaseLatencyUs + (local - 1) * fabric.intra.ring_latency_us;
  cost.bandwidth_us = transfer_us(s * (local - 1) / gpus, fabric.intra.bandwidth_gbs);
  if (gpus <= gpus_per_node) return cost;
  if (!fabric.inter) {
    throw UsageError(std::to_string(gpus) + " GPUs span nodes of " + std::to_string(gpus_per_node) +
                     " and the fabric '" + fabric.label +
                     "' names no network: add inter=... (e.g. inter=ib400x8)");
  }
  const LinkFigures& net = *fabric.inter;
  const int nics = fabric.nics_per_node > 0 ? fabric.nics_per_node : local;
  const double nic_gbs = net.bandwidth_gbs * std::min(1.0, static_cast<double>(nics) / local);
  cost.latency_us += (gpus - local) * net.ring_latency_us;
  cost.bandwidth_us = std::max(cost.bandwidth_us, transfer_us(s * (gpus - local) / gpus, nic_gbs));
  return cost;
}

}  // namespace gpubench
