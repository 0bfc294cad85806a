// How gpubench is linked. The torch wheel's libtorch.so and libtorch_cpu.so export their own
// copies of std::filesystem; when those bind ahead of libstdc++'s, remove_all on an existing
// directory jumps to a null pointer (every run that starts its own ranks crashed at its end).
// Built against Debian's LibTorch this passes either way; against the wheel
// (scripts/check-torch2.sh) it fails with a segfault if the link order regresses.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace {

TEST(Linking, StdFilesystemRemoveAllOnANestedDirectory) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("gpubench-linking-" + std::to_string(::getpid()));
  fs::create_directories(root / "a" / "b");
  std::ofstream(root / "a" / "b" / "rank-0.json") << "{}";
  std::ofstream(root / "rank-1.json") << "{}";
  EXPECT_EQ(fs::remove_all(root), 5u);  // two files, a, a/b and the root itself
  EXPECT_FALSE(fs::exists(root));
}

}  // namespace
