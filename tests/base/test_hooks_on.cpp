// The gpubench these tests start runs with the test hooks on (src/testing/test_hooks.h): the
// hidden test models and fault injection.
#include <cstdlib>

#include "common/environment.h"

namespace {

const bool kTestHooksOnForChildren = [] {
  ::setenv(gpubench::kTestHooksVariable, "1", 1);
  return true;
}();

}  // namespace
