#include "features/resolve_rule.h"

namespace gpubench {

std::string models_where(const std::function<bool(const ModelCapabilities&)>& holds) {
  return ModelRegistry::instance().names_where(holds);
}

std::string generating_models() {
  return models_where([](const ModelCapabilities& can) { return can.generates; });
}

}  // namespace gpubench
