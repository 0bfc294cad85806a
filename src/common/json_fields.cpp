#include "common/json_fields.h"

#include <cmath>

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {
namespace {

const nlohmann::json kNull;
const nlohmann::json kEmptyObject = nlohmann::json::object();

std::string number_text(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

std::optional<int64_t> json_int64(const nlohmann::json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return value.get<int64_t>();
}

JsonFields::JsonFields(const nlohmann::json& object, std::string where)
    : object_(object.is_null() ? &kEmptyObject : &object), where_(std::move(where)) {
  if (!object_->is_object()) {
    throw UsageError((where_.empty() ? "the document" : where_) + " must be a JSON object, got " +
                     echoed(object));
  }
}

std::string JsonFields::name(const std::string& key) const {
  return where_.empty() ? key : where_ + "." + key;
}

void JsonFields::reject(const std::string& key, const std::string& rule,
                        const nlohmann::json& value) const {
  throw UsageError(name(key) + " must be " + rule + ", got " + echoed(value));
}

const nlohmann::json& JsonFields::raw(const std::string& key) const {
  const auto it = object_->find(key);
  return it == object_->end() ? kNull : *it;
}

bool JsonFields::has(const std::string& key) const {
  return !raw(key).is_null();
}

std::string JsonFields::text(const std::string& key, const std::string& fallback) const {
  const nlohmann::json& value = raw(key);
  if (value.is_null()) return fallback;
  if (!value.is_string()) reject(key, "a string", value);
  return value.get<std::string>();
}

bool JsonFields::flag(const std::string& key, bool fallback) const {
  const nlohmann::json& value = raw(key);
  if (value.is_null()) return fallback;
  if (!value.is_boolean()) reject(key, "true or false", value);
  return value.get<bool>();
}

double JsonFields::checked_number(const std::string& key, const nlohmann::json& value, double min,
                                  double max) const {
  const std::string rule =
      "a finite number from " + number_text(min) +
      (max < std::numeric_limits<double>::max() ? " to " + number_text(max) : "");
  if (!value.is_number()) reject(key, rule, value);
  const double number = value.get<double>();
  if (!std::isfinite(number) || number < min || number > max) reject(key, rule, value);
  return number;
}

int64_t JsonFields::checked_integer(const std::string& key, const nlohmann::json& value,
                                    int64_t min, int64_t max) const {
  const std::string rule =
      "an integer from " + std::to_string(min) +
      (max < std::numeric_limits<int64_t>::max() ? " to " + std::to_string(max) : "");
  const std::optional<int64_t> number = json_int64(value);
  if (!number || *number < min || *number > max) reject(key, rule, value);
  return *number;
}

double JsonFields::number(const std::string& key, double fallback, double min, double max) const {
  const nlohmann::json& value = raw(key);
  return value.is_null() ? fallback : checked_number(key, value, min, max);
}

int64_t JsonFields::integer(const std::string& key, int64_t fallback, int64_t min,
                            int64_t max) const {
  const nlohmann::json& value = raw(key);
  return value.is_null() ? fallback : checked_integer(key, value, min, max);
}

const nlohmann::json& JsonFields::list(const std::string& key) const {
  const nlohmann::json& value = raw(key);
  if (!value.is_null() && !value.is_array()) reject(key, "a list", value);
  return value;
}

std::vector<double> JsonFields::numbers(const std::string& key, double min, double max) const {
  std::vector<double> out;
  for (const auto& value : list(key)) out.push_back(checked_number(key, value, min, max));
  return out;
}

std::vector<int64_t> JsonFields::integers(const std::string& key, int64_t min, int64_t max) const {
  std::vector<int64_t> out;
  for (const auto& value : list(key)) out.push_back(checked_integer(key, value, min, max));
  return out;
}

std::vector<std::string> JsonFields::texts(const std::string& key) const {
  std::vector<std::string> out;
  for (const auto& value : list(key)) {
    if (!value.is_string()) reject(key, "a list of strings", value);
    out.push_back(value.get<std::string>());
  }
  return out;
}

JsonFields JsonFields::object(const std::string& key) const {
  return JsonFields(raw(key), name(key));
}

std::vector<JsonFields> JsonFields::objects(const std::string& key) const {
  std::vector<JsonFields> out;
  for (const auto& value : list(key)) out.emplace_back(value, name(key) + "[]");
  return out;
}

}  // namespace gpubench
