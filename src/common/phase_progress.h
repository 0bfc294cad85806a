// Long work outside a run's timed steps (building a model, fit's probes, counting the models),
// said to whoever listens: the command line's progress printer. Nothing listens by default.
#pragma once

#include <functional>
#include <string>

namespace gpubench {

struct PhaseEvent {
  std::string phase;   // "building", "probing", "counting"
  std::string detail;  // what: "llama-3.2-1b (1.24 billion parameters)", "batch 2 of 128"
  int item = 0;        // 1-based, the one starting; 0 for a phase not counted in items
  int items = 0;
};
using PhaseListener = std::function<void(const PhaseEvent&)>;

void report_phase(const PhaseEvent& event);

// Installs `listener` while it lives, then restores the one before.
class PhaseListening {
 public:
  explicit PhaseListening(PhaseListener listener);
  ~PhaseListening();
  PhaseListening(const PhaseListening&) = delete;
  PhaseListening& operator=(const PhaseListening&) = delete;

 private:
  PhaseListener previous_;
};

}  // namespace gpubench
