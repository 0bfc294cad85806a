#include "datasheets/datasheet_database.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_fields.h"
#include "common/text_table.h"

namespace gpubench {

extern const char* const kBuiltinDatasheetsJson;  // generated from data/datasheets.json

namespace {

std::string normalized_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += (c == '_' || c == ' ') ? '-'
                                  : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

[[noreturn]] void refuse(const std::string& origin, const std::string& what) {
  throw UsageError("datasheets '" + echoed(origin) + "': " + what);
}

// An alternative may leave out the unit: it is the figure's.
FigureValue read_value(const JsonFields& fields, const Quantity& quantity,
                       const DatasheetDatabase& database, const std::string& where,
                       bool unit_required) {
  FigureValue value;
  const nlohmann::json& raw = fields.raw("value");
  if (quantity.kind == QuantityKind::kText) {
    value.text = fields.text("value");
    if (value.text.empty()) refuse(database.origin, where + ".value must be non-empty text");
  } else {
    value.number = fields.number("value", 0, 0);
    if (!raw.is_number() || value.number < quantity.plausible_min ||
        value.number > quantity.plausible_max) {
      refuse(database.origin, where + ".value must be a number from " +
                                  format_fixed(quantity.plausible_min, 0) + " to " +
                                  format_fixed(quantity.plausible_max, 0) + " " + quantity.unit +
                                  ", got " + echoed(raw));
    }
    const std::string unit = fields.text("unit", unit_required ? "" : quantity.unit);
    if (unit != quantity.unit) {
      refuse(database.origin,
             where + ".unit must be '" + quantity.unit + "', got '" + echoed(unit) + "'");
    }
  }
  value.source = fields.text("source");
  if (database.sources.count(value.source) == 0) {
    refuse(database.origin,
           where + ".source '" + echoed(value.source) + "' is not one of the file's sources");
  }
  value.note = fields.text("note");
  return value;
}

Accelerator read_accelerator(const JsonFields& fields, const DatasheetDatabase& database,
                             const std::string& where) {
  Accelerator a;
  a.name = fields.text("name");
  if (a.name.empty()) refuse(database.origin, where + ".name must be non-empty");
  const std::string at = "'" + echoed(a.name) + "'";
  a.full_name = fields.text("full_name", a.name);
  a.vendor = fields.text("vendor");
  a.aliases = fields.texts("aliases");
  const JsonFields match = fields.object("match");
  a.device_names = match.texts("device_names");
  const std::vector<double> range = match.numbers("memory_gib");
  if (range.size() != 2 || range[0] > range[1]) {
    refuse(database.origin, at + ": match.memory_gib must be [min, max] with min <= max");
  }
  a.min_memory_gib = range[0];
  a.max_memory_gib = range[1];
  const nlohmann::json& figures = fields.raw("figures");
  if (!figures.is_object() || figures.empty()) {
    refuse(database.origin, at + ": figures must be a non-empty object");
  }
  for (const auto& [key, value] : figures.items()) {
    const Quantity* quantity = find_quantity(key);
    if (quantity == nullptr) {
      refuse(database.origin, at + ": unknown quantity '" + echoed(key) + "'");
    }
    const std::string name = at + ".figures." + key;
    const JsonFields figure_fields(value, name);
    Figure figure;
    figure.quantity = quantity;
    figure.used = read_value(figure_fields, *quantity, database, name, true);
    for (const JsonFields& alternative : figure_fields.objects("alternatives")) {
      figure.alternatives.push_back(
          read_value(alternative, *quantity, database, name + ".alternatives", false));
    }
    a.figures[key] = std::move(figure);
  }
  // A sparse rate is twice the dense one (within rounding: the L40S datasheet gives 362.05 and
  // 733), which catches a sparse figure entered as dense.
  for (const auto& [key, figure] : a.figures) {
    if (figure.quantity->kind != QuantityKind::kPeakRate || !figure.quantity->sparse) continue;
    const auto dense = a.number(peak_rate_quantity(figure.quantity->precision, false)->key);
    if (dense && std::abs(figure.used.number / *dense - 2.0) > 0.05) {
      refuse(database.origin, at + ": " + key + " (" + format_fixed(figure.used.number, 1) +
                                  ") is not twice the dense figure (" + format_fixed(*dense, 1) +
                                  ")");
    }
  }
  return a;
}

Quantity link_quantity(const char* key, const char* unit, double min, double max) {
  return {key, key, unit, QuantityKind::kBandwidth, "", false, min, max};
}

FabricLink read_fabric(const JsonFields& fields, const DatasheetDatabase& database,
                       const std::string& where) {
  static const Quantity bandwidth = link_quantity("bandwidth", "GB/s", 0.1, 10000);
  static const Quantity latency = link_quantity("latency", "us", 0.01, 10000);
  FabricLink link;
  link.name = fields.text("name");
  if (link.name.empty()) refuse(database.origin, where + ".name must be non-empty");
  const std::string at = "fabric '" + echoed(link.name) + "'";
  link.label = fields.text("label", link.name);
  const std::string scope = fields.text("scope");
  if (scope != "intra" && scope != "inter") {
    refuse(database.origin, at + ": scope must be intra or inter, got '" + echoed(scope) + "'");
  }
  link.inter_node = scope == "inter";
  link.bandwidth_gbs =
      read_value(fields.object("bandwidth"), bandwidth, database, at + ".bandwidth", true);
  link.ring_latency_us =
      read_value(fields.object("ring_latency"), latency, database, at + ".ring_latency", true);
  if (link.inter_node) {
    link.tree_latency_us =
        read_value(fields.object("tree_latency"), latency, database, at + ".tree_latency", true);
  }
  return link;
}

bool ranges_overlap(const Accelerator& a, const Accelerator& b) {
  return a.min_memory_gib <= b.max_memory_gib && b.min_memory_gib <= a.max_memory_gib;
}

}  // namespace

const Figure* Accelerator::figure(const std::string& key) const {
  const auto it = figures.find(key);
  return it == figures.end() ? nullptr : &it->second;
}

bool Accelerator::lists_device(const std::string& device_name) const {
  return std::find(device_names.begin(), device_names.end(), device_name) != device_names.end();
}

std::optional<double> Accelerator::number(const std::string& key) const {
  const Figure* f = figure(key);
  if (f == nullptr || f->quantity->kind == QuantityKind::kText) return std::nullopt;
  return f->used.number;
}

const Accelerator* DatasheetDatabase::find(const std::string& name) const {
  const std::string wanted = normalized_name(name);
  for (const Accelerator& a : accelerators) {
    if (normalized_name(a.name) == wanted) return &a;
    for (const std::string& alias : a.aliases) {
      if (normalized_name(alias) == wanted) return &a;
    }
  }
  return nullptr;
}

const FabricLink* DatasheetDatabase::fabric(const std::string& name) const {
  const std::string wanted = normalized_name(name);
  for (const FabricLink& link : fabrics) {
    if (normalized_name(link.name) == wanted) return &link;
  }
  return nullptr;
}

std::vector<std::string> DatasheetDatabase::names() const {
  std::vector<std::string> out;
  for (const Accelerator& a : accelerators) out.push_back(a.name);
  return out;
}

DatasheetDatabase parse_datasheets(const nlohmann::json& document, const std::string& origin) {
  DatasheetDatabase database;
  database.origin = origin;
  const JsonFields top(document, "");
  if (top.text("schema") != kDatasheetSchema) {
    refuse(origin, std::string("schema must be '") + kDatasheetSchema + "'");
  }
  const nlohmann::json& sources = top.raw("sources");
  if (!sources.is_object()) refuse(origin, "sources must be an object of id: {title, url}");
  for (const auto& [id, value] : sources.items()) {
    const JsonFields source(value, "sources." + id);
    DatasheetSource s{source.text("title"), source.text("url")};
    if (s.title.empty() || s.url.empty()) {
      refuse(origin, "sources." + echoed(id) + " needs a title and a url");
    }
    database.sources[id] = s;
  }
  std::set<std::string> names;
  int index = 0;
  for (const JsonFields& entry : top.objects("accelerators")) {
    Accelerator a =
        read_accelerator(entry, database, "accelerators[" + std::to_string(index++) + "]");
    std::vector<std::string> all = a.aliases;
    all.push_back(a.name);
    for (const std::string& name : all) {
      if (!names.insert(normalized_name(name)).second) {
        refuse(origin, "the name '" + echoed(name) + "' is used twice");
      }
    }
    for (const Accelerator& other : database.accelerators) {
      for (const std::string& device : a.device_names) {
        if (other.lists_device(device) && ranges_overlap(a, other)) {
          refuse(origin, "device '" + echoed(device) + "' matches both " + other.name + " and " +
                             a.name + " over the same memory sizes");
        }
      }
    }
    database.accelerators.push_back(std::move(a));
  }
  if (database.accelerators.empty()) refuse(origin, "accelerators must list at least one entry");
  if (top.has("fabrics")) {
    int index = 0;
    for (const JsonFields& entry : top.objects("fabrics")) {
      FabricLink link = read_fabric(entry, database, "fabrics[" + std::to_string(index++) + "]");
      if (database.fabric(link.name) != nullptr) {
        refuse(origin, "the fabric '" + echoed(link.name) + "' is listed twice");
      }
      database.fabrics.push_back(std::move(link));
    }
  }
  return database;
}

const DatasheetDatabase& datasheets() {
  static const DatasheetDatabase database = [] {
    const char* path = std::getenv("GPUBENCH_DATASHEETS");
    if (path != nullptr && *path != '\0') {
      return parse_datasheets(read_json_input_file(path, "datasheet file"), path);
    }
    return parse_datasheets(parse_json_input(kBuiltinDatasheetsJson, "data/datasheets.json"),
                            "built-in data/datasheets.json");
  }();
  return database;
}

namespace {

// A result that records no memory size (a published figure): the entry that lists the name, where
// one alone does.
DeviceMatch match_device_by_name(const DatasheetDatabase& database,
                                 const std::string& device_name) {
  std::vector<const Accelerator*> named;
  for (const Accelerator& a : database.accelerators) {
    if (a.lists_device(device_name)) named.push_back(&a);
  }
  if (named.size() == 1) {
    return {named.front(), "device name '" + device_name +
                               "' (no memory size recorded; the one entry listing the name)"};
  }
  if (named.empty()) return {nullptr, "no datasheet entry lists device '" + device_name + "'"};
  return {nullptr, "device '" + device_name + "' is listed by " + std::to_string(named.size()) +
                       " entries and no memory size was recorded to choose"};
}

}  // namespace

DeviceMatch match_device(const DatasheetDatabase& database, const std::string& device_name,
                         int64_t memory_bytes) {
  if (memory_bytes <= 0) return match_device_by_name(database, device_name);
  const double gib = static_cast<double>(memory_bytes) / double(1 << 30);
  const std::string memory = format_fixed(gib, 1) + " GiB";
  const Accelerator* named = nullptr;  // the first entry with the name, when no size fits
  for (const Accelerator& a : database.accelerators) {
    if (!a.lists_device(device_name)) continue;
    if (gib >= a.min_memory_gib && gib <= a.max_memory_gib) {
      return {&a, "device name '" + device_name + "' and " + memory};
    }
    if (named == nullptr) named = &a;
  }
  if (named != nullptr) {
    return {nullptr, "device '" + device_name + "' is listed for " + named->name + " but its " +
                         memory + " is outside " + format_fixed(named->min_memory_gib, 0) + "-" +
                         format_fixed(named->max_memory_gib, 0) + " GiB"};
  }
  return {nullptr, "no datasheet entry lists device '" + device_name + "'"};
}

}  // namespace gpubench
