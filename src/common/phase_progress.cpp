#include "common/phase_progress.h"

#include <utility>

namespace gpubench {
namespace {

PhaseListener& listener() {
  static PhaseListener installed;
  return installed;
}

}  // namespace

void report_phase(const PhaseEvent& event) {
  if (listener()) listener()(event);
}

PhaseListening::PhaseListening(PhaseListener installed) : previous_(std::move(listener())) {
  listener() = std::move(installed);
}

PhaseListening::~PhaseListening() {
  listener() = std::move(previous_);
}

}  // namespace gpubench
