// Reading the fields of a JSON object that came from outside (a result file), each checked for
// type, finiteness and bounds where it is read, so that a wrong or overflowing value is one
// clear UsageError naming the field ("metrics.throughput must be a finite number from 0, got
// "fast"") instead of a JSON-library message or a silently wrapped number. An absent (or null)
// field takes the fallback.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

// A JSON integer that fits int64_t, or nothing (not an integer, or an unsigned one above the
// largest int64_t). Both readers of outside integers (this class, the field table) use it.
std::optional<int64_t> json_int64(const nlohmann::json& value);

class JsonFields {
 public:
  // `where` prefixes field names in messages ("metrics"); empty at the top level. Throws
  // UsageError when `object` is not a JSON object (null counts as an empty one).
  JsonFields(const nlohmann::json& object, std::string where);

  bool has(const std::string& key) const;
  std::string text(const std::string& key, const std::string& fallback = "") const;
  bool flag(const std::string& key, bool fallback = false) const;
  double number(const std::string& key, double fallback = 0, double min = 0,
                double max = std::numeric_limits<double>::max()) const;
  int64_t integer(const std::string& key, int64_t fallback = 0, int64_t min = 0,
                  int64_t max = std::numeric_limits<int64_t>::max()) const;
  std::vector<double> numbers(const std::string& key, double min = 0,
                              double max = std::numeric_limits<double>::max()) const;
  std::vector<int64_t> integers(const std::string& key, int64_t min = 0,
                                int64_t max = std::numeric_limits<int64_t>::max()) const;
  std::vector<std::string> texts(const std::string& key) const;
  JsonFields object(const std::string& key) const;  // absent: an empty object
  // The elements of a list field, each read as an object.
  std::vector<JsonFields> objects(const std::string& key) const;
  // The raw value (null when absent), for a caller that checks it itself.
  const nlohmann::json& raw(const std::string& key) const;

 private:
  std::string name(const std::string& key) const;
  [[noreturn]] void reject(const std::string& key, const std::string& rule,
                           const nlohmann::json& value) const;
  double checked_number(const std::string& key, const nlohmann::json& value, double min,
                        double max) const;
  int64_t checked_integer(const std::string& key, const nlohmann::json& value, int64_t min,
                          int64_t max) const;
  const nlohmann::json& list(const std::string& key) const;

  const nlohmann::json* object_;
  std::string where_;
};

}  // namespace gpubench
