// Name tables for enums: one table per enum gives printing, parsing with a clear error, and the
// list of allowed names.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {

template <typename Enum>
using EnumNames = std::vector<std::pair<Enum, std::string>>;

template <typename Enum>
std::string name_of(const EnumNames<Enum>& table, Enum value) {
  for (const auto& [candidate, name] : table) {
    if (candidate == value) return name;
  }
  return "?";
}

template <typename Enum>
std::vector<std::string> names_of(const EnumNames<Enum>& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(entry.second);
  return names;
}

// Throws UsageError: "unknown <what> '<text>'; allowed: a, b, c".
template <typename Enum>
Enum parse_name(const EnumNames<Enum>& table, const std::string& text, const std::string& what) {
  for (const auto& [value, name] : table) {
    if (name == text) return value;
  }
  throw UsageError("unknown " + what + " '" + echoed(text) +
                   "'; allowed: " + join(names_of(table)));
}

}  // namespace gpubench
