#include "common/errors.h"

namespace gpubench {

void require_positive(int64_t value, const std::string& name) {
  if (value <= 0) {
    throw UsageError(name + " must be a positive integer, got " + std::to_string(value));
  }
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace gpubench
