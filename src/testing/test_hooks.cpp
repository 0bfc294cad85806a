#include "testing/test_hooks.h"

#include <atomic>

namespace gpubench {
namespace {

std::atomic<bool> test_hooks{false};

}  // namespace

bool test_hooks_enabled() {
  return test_hooks.load();
}
void enable_test_hooks(bool enabled) {
  test_hooks.store(enabled);
}

}  // namespace gpubench
