#include "modeling/weight_formats.h"

#include <stdexcept>

namespace gpubench::layers {

WeightFormatRegistry& WeightFormatRegistry::instance() {
  static WeightFormatRegistry registry;
  return registry;
}

void WeightFormatRegistry::add(WeightFormatInfo info) {
  const std::string name = info.name;
  if (!formats_.emplace(name, std::move(info)).second) {
    throw std::logic_error("weight format '" + name + "' registered twice");
  }
}

const WeightFormatInfo* WeightFormatRegistry::find(const std::string& name) const {
  const auto found = formats_.find(name);
  return found == formats_.end() ? nullptr : &found->second;
}

std::vector<std::string> WeightFormatRegistry::names_where(
    const std::function<bool(const WeightFormatInfo&)>& holds) const {
  std::vector<std::string> names;
  for (const auto& [name, info] : formats_) {
    if (holds(info)) names.push_back(name);
  }
  return names;
}

std::shared_ptr<const WeightFormat> make_weight_format(const std::string& name,
                                                       const WeightFormatOptions& options) {
  const WeightFormatInfo* info = WeightFormatRegistry::instance().find(name);
  return info == nullptr ? nullptr : info->make(options);
}

bool is_integer_format(const std::string& weights) {
  const WeightFormatInfo* info = WeightFormatRegistry::instance().find(weights);
  return info != nullptr && info->integer_codes;
}

}  // namespace gpubench::layers
