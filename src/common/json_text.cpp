#include "common/json_text.h"

namespace gpubench {

std::string json_text(const nlohmann::json& document, int indent) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string plain_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : json_text(value, -1);
}

}  // namespace gpubench
