#include "common/errors.h"

#include <csignal>

namespace gpubench {
namespace {

volatile std::sig_atomic_t pending_signal = 0;

}  // namespace

void note_interruption(int signal_number) {
  pending_signal = signal_number;
}

void throw_if_interrupted() {
  if (pending_signal != 0) throw Interrupted(pending_signal);
}

void require_positive(int64_t value, const std::string& name) {
  if (value <= 0) {
    throw UsageError(name + " must be a positive integer, got " + std::to_string(value));
  }
}

void Refusal::raise_if_refused() const {
  if (!refused()) return;
  if (!requirement.empty()) throw Unavailable(requirement, message);
  throw UsageError(message);
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
