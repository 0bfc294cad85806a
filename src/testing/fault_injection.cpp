#include "testing/fault_injection.h"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "common/enum_names.h"
#include "common/environment.h"
#include "common/log.h"
#include "testing/test_hooks.h"

namespace gpubench {
namespace {

const EnumNames<FaultKind> kFaultKinds = {{FaultKind::kThrow, "throw"},
                                          {FaultKind::kOom, "oom"},
                                          {FaultKind::kAbort, "abort"},
                                          {FaultKind::kHang, "hang"}};

}  // namespace

void FaultInjection::trigger() const {
  switch (kind) {
    case FaultKind::kThrow:
      throw std::runtime_error("injected failure (throw)");
    case FaultKind::kOom:
      throw std::runtime_error("CUDA out of memory (injected failure)");
    case FaultKind::kAbort:
      std::abort();
    case FaultKind::kHang:
      break;
  }
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

std::optional<FaultInjection> fault_for(const std::optional<std::string>& setting,
                                        const std::string& model, Precision precision, int rank) {
  if (!setting) return std::nullopt;
  if (!test_hooks_enabled()) {
    log::warn("{} is ignored: it is a test hook, and {}=1 is not set", kFaultInjectionVariable,
              kTestHooksVariable);
    return std::nullopt;
  }
  std::string kind = *setting;
  const auto colon = kind.find(':');
  std::string target;
  if (colon != std::string::npos) {
    target = kind.substr(colon + 1);
    kind = kind.substr(0, colon);
  }
  const FaultInjection fault{parse_name(kFaultKinds, kind, kFaultInjectionVariable)};
  const bool aimed_here = target.empty() || target == model || target == to_string(precision) ||
                          target == "rank" + std::to_string(rank);
  if (!aimed_here) return std::nullopt;
  return fault;
}

}  // namespace gpubench
