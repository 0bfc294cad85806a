#include "features/parallelism/scaling/fabric.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_fields.h"
#include "common/text_table.h"

namespace gpubench {
namespace {

constexpr int kMaxNicsPerNode = 64;

[[noreturn]] void refuse(const std::string& spec, const std::string& what) {
  throw UsageError("--fabric '" + echoed(spec) + "': " + what);
}

std::string url_of(const DatasheetDatabase& database, const std::string& source) {
  const auto it = database.sources.find(source);
  return it == database.sources.end() ? source : it->second.url;
}

LinkFigures figures_of(const FabricLink& link, const DatasheetDatabase& database) {
  LinkFigures f;
  f.name = link.name;
  f.label = link.label;
  f.bandwidth_gbs = link.bandwidth_gbs.number;
  f.ring_latency_us = link.ring_latency_us.number;
  f.tree_latency_us = link.tree_latency_us.number;
  f.source = url_of(database, link.bandwidth_gbs.source);
  return f;
}

std::string link_names(const DatasheetDatabase& database, bool inter_node) {
  std::vector<std::string> names;
  for (const FabricLink& link : database.fabrics) {
    if (link.inter_node == inter_node) names.push_back(link.name);
  }
  return join(names, ", ");
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// A positive number in [min, max] or nothing.
std::optional<double> number_of(const std::string& text, double min, double max) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(value >= min && value <= max)) return std::nullopt;
  return value;
}

// intra=..., inter=... : a named link or a bandwidth in GB/s each way.
LinkFigures link_from(const std::string& spec, const std::string& key, const std::string& value,
                      const DatasheetDatabase& database) {
  const bool inter_node = key == "inter";
  if (const auto gbs = number_of(value, 0.01, 100000)) {
    LinkFigures f;
    f.name = "custom";
    f.label = format_fixed(*gbs, 1) + " GB/s each way";
    f.bandwidth_gbs = *gbs;
    // The named links' latencies of that kind, unless given.
    const FabricLink* like = database.fabric(inter_node ? "ib400" : "pcie4");
    if (like) {
      f.ring_latency_us = like->ring_latency_us.number;
      f.tree_latency_us = like->tree_latency_us.number;
    }
    f.source = "--fabric";
    return f;
  }
  const FabricLink* link = database.fabric(value);
  if (link == nullptr || link->inter_node != inter_node) {
    refuse(spec, key + "=" + echoed(value) + " is neither a number (GB/s each way) nor one of " +
                     link_names(database, inter_node));
  }
  return figures_of(*link, database);
}

void set_latency(const std::string& spec, std::optional<LinkFigures>& link, const std::string& key,
                 const std::string& value) {
  const auto us = number_of(value, 0.01, 100000);
  if (!us) {
    refuse(spec, key + " must be microseconds from 0.01 to 100000, got '" + echoed(value) + "'");
  }
  if (!link) refuse(spec, key + " needs " + key.substr(0, 5) + "= first");
  link->ring_latency_us = *us;
  if (key == "inter_latency_us") link->tree_latency_us = *us;
}

Fabric fabric_from_pairs(const std::string& spec, const DatasheetDatabase& database) {
  std::optional<LinkFigures> intra, inter;
  Fabric fabric;
  for (const std::string& pair : split(spec, ',')) {
    const size_t eq = pair.find('=');
    const std::string key = pair.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : pair.substr(eq + 1);
    if (key == "inter") {
      const size_t x = value.rfind('x');
      if (x != std::string::npos && x > 0) {
        const auto nics = number_of(value.substr(x + 1), 1, kMaxNicsPerNode);
        if (!nics || *nics != static_cast<int>(*nics)) {
          refuse(spec, "inter=" + echoed(value) +
                           ": the NICs a node after 'x' must be a whole "
                           "number from 1 to " +
                           std::to_string(kMaxNicsPerNode));
        }
        fabric.nics_per_node = static_cast<int>(*nics);
        value = value.substr(0, x);
      }
    }
    if (key == "intra" || key == "inter") {
      (key == "intra" ? intra : inter) = link_from(spec, key, value, database);
    } else if (key == "intra_latency_us") {
      set_latency(spec, intra, key, value);
    } else if (key == "inter_latency_us") {
      set_latency(spec, inter, key, value);
    } else {
      refuse(spec, "unknown part '" + echoed(pair) +
                       "': give intra=, inter=, intra_latency_us=, inter_latency_us=");
    }
  }
  if (!intra) refuse(spec, "name the link inside a node: intra=" + link_names(database, false));
  fabric.intra = *intra;
  fabric.inter = inter;
  fabric.label = intra->name == "custom" ? "intra " + intra->label : intra->name;
  if (inter) {
    fabric.label += " + " + (inter->name == "custom" ? inter->label : inter->name) +
                    (fabric.nics_per_node ? "x" + std::to_string(fabric.nics_per_node) : "");
  }
  return fabric;
}

}  // namespace

LinkFigures intra_link_of(const Accelerator& accelerator, const DatasheetDatabase& database) {
  const Figure* form = accelerator.figure("form_factor");
  const Figure* nvlink = accelerator.figure("nvlink_gbs");
  const Figure* architecture = accelerator.figure("architecture");
  const Figure* host = accelerator.figure("host_interface");
  const auto says = [](const Figure* f, const char* what) {
    return f && f->used.text.find(what) != std::string::npos;
  };
  // An SXM module sits on an HGX baseboard whose NVSwitches join every GPU at the module's full
  // NVLink bandwidth; a PCIe card's NVLink bridge joins only a pair, so eight talk over PCIe.
  if (says(form, "SXM") && nvlink) {
    const char* name = says(architecture, "Hopper") ? "nvlink4" : "nvlink3";
    const FabricLink* link = database.fabric(name);
    if (link) {
      LinkFigures f = figures_of(*link, database);
      f.bandwidth_gbs = nvlink->used.number / 2;  // the datasheet's bidirectional figure
      f.source = url_of(database, nvlink->used.source);
      f.label = accelerator.name + ": " + link->label + ", " + format_fixed(f.bandwidth_gbs, 0) +
                " GB/s each way (half the datasheet's " + format_fixed(nvlink->used.number, 0) +
                " GB/s)";
      return f;
    }
  }
  const FabricLink* pcie = database.fabric(says(host, "Gen5") ? "pcie5" : "pcie4");
  if (!says(host, "PCIe") || pcie == nullptr) {
    throw UsageError("the datasheet of " + accelerator.name +
                     " names no NVLink or PCIe link to predict over; give --fabric intra=...");
  }
  LinkFigures f = figures_of(*pcie, database);
  f.label = accelerator.name + ": " + pcie->label + " (" + host->used.text + ")";
  return f;
}

Fabric parse_fabric(const std::string& spec, const DatasheetDatabase& database) {
  if (spec.empty()) throw UsageError("--fabric must not be empty");
  if (spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".json") == 0) {
    Fabric fabric;
    fabric.measured = read_allreduce_curve(spec);
    fabric.label = "measured " + std::filesystem::path(spec).filename().string();
    return fabric;
  }
  if (spec.find('=') != std::string::npos) return fabric_from_pairs(spec, database);
  if (const Accelerator* accelerator = database.find(spec)) {
    Fabric fabric;
    fabric.intra = intra_link_of(*accelerator, database);
    fabric.label = accelerator->name + " (" + fabric.intra.name + ")";
    return fabric;
  }
  if (database.fabric(spec) != nullptr) return fabric_from_pairs("intra=" + spec, database);
  refuse(spec, "not an accelerator (" + join(database.names(), ", ") + "), a link (" +
                   link_names(database, false) +
                   "), intra=...,inter=... or an allreduce .json file");
}

std::vector<std::string> comparison_fabric_specs() {
  return {"intra=pcie4,inter=ib200x8", "intra=nvlink3,inter=ib200x8",
          "intra=nvlink4,inter=ib400x8"};
}

MeasuredCurve read_allreduce_curve(const std::string& path) {
  const nlohmann::json document = read_json_input_file(path, "allreduce file");
  MeasuredCurve curve;
  curve.file = path;
  try {
    const JsonFields top(document, "");
    if (top.text("schema") != "gpubench.allreduce/1") {
      throw UsageError("schema must be gpubench.allreduce/1 (a `gpubench allreduce -o` file)");
    }
    curve.world_size = static_cast<int>(top.integer("world_size", 0, 2, 1 << 20));
    curve.nodes = static_cast<int>(top.integer("nodes", 1, 1, 1 << 20));
    curve.backend = top.text("backend");
    for (const JsonFields& row : top.objects("rows")) {
      const int64_t bytes = row.integer("bytes", 0, 1);
      if (!curve.bytes.empty() && bytes <= curve.bytes.back()) {
        throw UsageError("rows must grow in bytes");
      }
      curve.bytes.push_back(bytes);
      curve.time_us.push_back(row.number("time_us", 0, 1e-6, 1e12));
      curve.busbw_gbps.push_back(row.number("busbw_gbps", 0, 1e-9, 1e6));
    }
    if (curve.bytes.empty()) throw UsageError("rows must list at least one size");
  } catch (const UsageError& error) {
    throw UsageError("'" + echoed(path) + "': " + error.what());
  }
  return curve;
}

Fabric parse_fabric(const std::string& spec, const DatasheetDatabase& database,
                    const std::string& option) {
  try {
    return parse_fabric(spec, database);
  } catch (const UsageError& error) {
    const std::string message = error.what();
    const std::string own = "--fabric";
    if (message.compare(0, own.size(), own) != 0) throw;
    throw UsageError(option + message.substr(own.size()));
  }
}

std::string fabric_source(const Fabric& f) {
  if (f.measured) {
    return "measured all-reduce curve " + f.measured->file + " (" + f.measured->backend + ", " +
           std::to_string(f.measured->world_size) + " ranks)";
  }
  std::string text = "inside a node " + f.intra.label + " [" + f.intra.source + "]";
  if (f.inter) {
    text += "; between nodes " + f.inter->label +
            (f.nics_per_node ? ", " + std::to_string(f.nics_per_node) + " a node" : "") + " [" +
            f.inter->source + "]";
  }
  return text;
}

}  // namespace gpubench
