// Standard error held back while c10d joins, and put back after.
#include "common/stderr_capture.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace gpubench {
namespace {

TEST(StderrCapture, HoldsWhatAnyWriterSendsToDescriptorTwoAndPutsItBack) {
  StderrCapture capture;
  std::fprintf(stderr, "from stdio\n");
  const std::string raw = "from write(2)\n";
  ASSERT_EQ(::write(STDERR_FILENO, raw.data(), raw.size()), static_cast<ssize_t>(raw.size()));
  EXPECT_EQ(capture.release(), "from stdio\nfrom write(2)\n");
  EXPECT_EQ(capture.release(), "");
  // Descriptor 2 is standard error again: a write there is not held by anyone.
  EXPECT_EQ(::write(STDERR_FILENO, "", 0), 0);
}

// A master retried for a week writes a line a second: only the last lines are kept, whole.
TEST(StderrCapture, KeepsOnlyTheLastLinesWhole) {
  StderrCapture capture(64);
  for (int i = 0; i < 10000; ++i) std::fprintf(stderr, "retry %05d of the rendezvous\n", i);
  const std::string held = capture.release();
  EXPECT_LE(held.size(), 64u);
  EXPECT_EQ(held.rfind("retry ", 0), 0u) << held;
  EXPECT_NE(held.find("retry 09999 of the rendezvous\n"), std::string::npos) << held;
}

}  // namespace
}  // namespace gpubench
