// The fabric a data-parallel job would all-reduce over (docs/scaling.md): a link inside a node
// (NVLink through NVSwitch, PCIe) and, for several nodes, a network with so many NICs a node;
// or the busbw curve a `gpubench allreduce` run measured. Built from the datasheet database
// (data/datasheets.json: an accelerator's own NVLink and PCIe figures, or a named link), from
// a measured allreduce file, or from numbers the user gives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datasheets/datasheet_database.h"

namespace gpubench {

// One link's figures as the model uses them, each with where it came from.
struct LinkFigures {
  std::string name;  // "nvlink4", or "custom"
  std::string label;
  double bandwidth_gbs = 0;  // each way, per GPU (per NIC for a network)
  double ring_latency_us = 0;
  double tree_latency_us = 0;  // networks only
  std::string source;          // URL, file or "--fabric"
};

// A measured all-reduce curve: time by message size at one world size.
struct MeasuredCurve {
  std::string file;
  int world_size = 0;
  int nodes = 1;
  std::string backend;
  std::vector<int64_t> bytes;
  std::vector<double> time_us;
  std::vector<double> busbw_gbps;
};

struct Fabric {
  std::string label;  // what tables and the chart call it
  LinkFigures intra;
  std::optional<LinkFigures> inter;  // none: single-node world sizes only
  int nics_per_node = 0;             // 0: one per GPU
  std::optional<MeasuredCurve> measured;
};

// The fabric a --fabric value names (docs/scaling.md):
//   A100-80GB-SXM                   an accelerator: its own link inside the node, from its
//                                   datasheet figures (NVLink with NVSwitch for SXM, else PCIe)
//   intra=nvlink4,inter=ib400x8     named links (`gpubench scale --list-fabrics`), NICs a node
//   intra=200,intra_latency_us=4    numbers in GB/s each way and microseconds; with a name, a
//                                   number replaces that figure
//   allreduce.json                  a gpubench.allreduce/1 file: its measured curve
// Throws UsageError naming the bad part and what is allowed.
Fabric parse_fabric(const std::string& spec, const DatasheetDatabase& database);
// The same for another option that takes a fabric (`report --predict-fabric`): its messages name
// `option` instead of --fabric.
Fabric parse_fabric(const std::string& spec, const DatasheetDatabase& database,
                    const std::string& option);

// The link inside a node of eight of these accelerators, from their datasheet figures.
LinkFigures intra_link_of(const Accelerator& accelerator, const DatasheetDatabase& database);

// The fabrics --compare-fabrics puts side by side: PCIe, NVLink 3 and NVLink 4 nodes, each
// joined to others by the InfiniBand its DGX has.
std::vector<std::string> comparison_fabric_specs();

MeasuredCurve read_allreduce_curve(const std::string& path);  // throws UsageError

// Where the fabric's figures come from, in words: its links and their sources, or its curve.
std::string fabric_source(const Fabric& fabric);

}  // namespace gpubench
