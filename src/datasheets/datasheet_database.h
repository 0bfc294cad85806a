// The datasheet database: vendor figures per accelerator, each with its source, read from
// data/datasheets.json (built into the binary; GPUBENCH_DATASHEETS names another file), checked
// when read: every figure a known quantity in its unit, within a plausible range, with a source
// the file lists; no name or device match claimed twice.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasheets/quantities.h"

namespace gpubench {

struct FigureValue {
  double number = 0;  // numeric quantities
  std::string text;   // text quantities
  std::string source;
  std::string note;
};

struct Figure {
  const Quantity* quantity = nullptr;
  FigureValue used;
  std::vector<FigureValue> alternatives;  // what other sources say, not used
};

struct DatasheetSource {
  std::string title;
  std::string url;
};

struct Accelerator {
  std::string name;  // "L40S": what `specs` takes and results record
  std::string full_name;
  std::string vendor;
  std::vector<std::string> aliases;
  // A CUDA device is this entry when its name is one of these and its memory falls in the range.
  std::vector<std::string> device_names;
  double min_memory_gib = 0, max_memory_gib = 0;
  std::map<std::string, Figure> figures;  // by quantity key

  const Figure* figure(const std::string& key) const;  // nullptr when not given
  bool lists_device(const std::string& device_name) const;
  std::optional<double> number(const std::string& key) const;
};

// A link between GPUs as the scaling model sees it (docs/scaling.md): its bandwidth each way per
// GPU (per NIC for a network) and NCCL's per-step latencies, each figure with its source.
struct FabricLink {
  std::string name;  // "nvlink4", "ib400": what --fabric takes
  std::string label;
  bool inter_node = false;
  FigureValue bandwidth_gbs;  // GB/s each way
  FigureValue ring_latency_us;
  FigureValue tree_latency_us;  // networks only
};

struct DatasheetDatabase {
  std::string origin;  // "built-in data/datasheets.json" or the file's path
  std::map<std::string, DatasheetSource> sources;
  std::vector<Accelerator> accelerators;
  std::vector<FabricLink> fabrics;

  const FabricLink* fabric(const std::string& name) const;  // nullptr when unknown
  // By name or alias, ignoring case and treating '_' and ' ' as '-'; nullptr when unknown.
  const Accelerator* find(const std::string& name) const;
  std::vector<std::string> names() const;
};

inline constexpr const char* kDatasheetSchema = "gpubench.datasheets/1";

// Throws UsageError naming the entry and field for anything the checks above refuse.
DatasheetDatabase parse_datasheets(const nlohmann::json& document, const std::string& origin);
// The built-in database, or the file GPUBENCH_DATASHEETS names; read once. Throws UsageError.
const DatasheetDatabase& datasheets();

struct DeviceMatch {
  const Accelerator* entry = nullptr;  // nullptr: unmatched
  std::string reason;                  // how it matched, or why not
};

// The entry for a CUDA device, from its name and total memory; never a guess: a name that no
// entry lists, or a memory size outside the named entry's range, is unmatched.
DeviceMatch match_device(const DatasheetDatabase& database, const std::string& device_name,
                         int64_t memory_bytes);

}  // namespace gpubench
