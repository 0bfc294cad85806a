// gpubench_tests runs with the test hooks on (src/testing/test_hooks.h): the hidden test models
// and fault injection, in this process and, through the environment, in every gpubench it
// starts. (Set here rather than in CTest's ENVIRONMENT, of which GoogleTest's discovered tests
// keep one variable only.)
#include <cstdlib>

#include "common/environment.h"
#include "testing/test_hooks.h"

namespace {

const bool kTestHooksOn = [] {
  ::setenv(gpubench::kTestHooksVariable, "1", 1);
  gpubench::enable_test_hooks(true);
  return true;
}();

}  // namespace
