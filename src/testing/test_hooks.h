// The one switch for the test-only code the shipped binary carries: the hidden test models
// (test-tiny-*, found by name only) and fault injection (testing/fault_injection.h). Off unless
// the process turns it on: gpubench-train does where GPUBENCH_TEST_HOOKS=1 (common/environment.h),
// the test programs always. Off, a test model is an unknown model and a fault is not injected.
#pragma once

namespace gpubench {

bool test_hooks_enabled();
void enable_test_hooks(bool enabled);

}  // namespace gpubench
