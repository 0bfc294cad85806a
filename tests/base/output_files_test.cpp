// Output files are never lost, forged or clobbered: a device or FIFO is written into, a link's
// target is replaced in its own folder, a file keeps its mode, temporary names cannot be
// hijacked, and concurrent writers into one folder each keep their file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "results/result_path.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDirectory;

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

TEST(OutputFiles, ALinkIsFollowedAndItsTargetReplacedInItsOwnFolder) {
  ScratchDirectory dir("out-link");
  fs::create_directories(dir.file("elsewhere"));
  const std::string target = dir.file("elsewhere/report.md");
  std::ofstream(target) << "old";
  fs::create_symlink("elsewhere/report.md", dir.file("report.md"));
  write_text_atomically(dir.file("report.md"), "new");
  EXPECT_TRUE(fs::is_symlink(dir.file("report.md"))) << "the link stays a link";
  EXPECT_EQ(contents(target), "new");
  // A dangling link: its target is created.
  fs::create_symlink("elsewhere/later.md", dir.file("later.md"));
  write_text_atomically(dir.file("later.md"), "made");
  EXPECT_EQ(contents(dir.file("elsewhere/later.md")), "made");
}

TEST(OutputFiles, AnExistingFileKeepsItsModeAndANewOneFollowsTheUmask) {
  ScratchDirectory dir("out-mode");
  const std::string path = dir.file("private.json");
  std::ofstream(path) << "{}";
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  write_text_atomically(path, "{\"a\": 1}");
  EXPECT_EQ(mode_of(path) & 0777, 0600u);
  const mode_t mask = ::umask(022);
  write_text_atomically(dir.file("fresh.json"), "{}");
  ::umask(mask);
  EXPECT_EQ(mode_of(dir.file("fresh.json")) & 0777, 0644u);
}

// As root (lab nodes, CI here) a replaced file keeps its owner too.
TEST(OutputFiles, AsRootAReplacedFileKeepsItsOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file away";
  ScratchDirectory dir("out-owner");
  const std::string path = dir.file("shared.json");
  std::ofstream(path) << "{}";
  ASSERT_EQ(::chown(path.c_str(), 4321, 4322), 0);
  write_text_atomically(path, "{\"b\": 2}");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4321u);
  EXPECT_EQ(st.st_gid, 4322u);
}

TEST(OutputFiles, AFifoIsWrittenIntoNotReplaced) {
  ScratchDirectory dir("out-fifo");
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string read_back;
  std::thread reader([&] { read_back = contents(fifo); });
  write_text_atomically(fifo, "through the pipe\n");
  reader.join();
  EXPECT_EQ(read_back, "through the pipe\n");
  EXPECT_TRUE(S_ISFIFO(mode_of(fifo)));
}

// As root a replaced /dev/null became an 830-byte regular file. Any user can write into it.
TEST(OutputFiles, ADeviceIsWrittenIntoNotReplaced) {
  write_text_atomically("/dev/null", "discarded\n");
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/null")));
  ScratchDirectory dir("out-dev");
  fs::create_symlink("/dev/null", dir.file("null-link"));
  write_text_atomically(dir.file("null-link"), "discarded\n");
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/null")));
}

TEST(OutputFiles, PlantedLinksAtTheOldTemporaryNamesReachNothing) {
  ScratchDirectory dir("out-hijack");
  const std::string victim = dir.file("victim.txt");
  std::ofstream(victim) << "precious";
  const std::string out = dir.file("report.md");
  // The names gpubench once used: <out>.tmp.<pid> and <dir>/.gpubench-probe.<pid>.
  fs::create_symlink(victim, out + ".tmp." + std::to_string(::getpid()));
  fs::create_symlink(victim, dir.file(".gpubench-probe." + std::to_string(::getpid())));
  write_text_atomically(out, "the report");
  ensure_writable_directory(dir.path());
  EXPECT_EQ(contents(victim), "precious");
  EXPECT_EQ(contents(out), "the report");
  // No temporary file is left behind: only what was there and the output.
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    names.insert(entry.path().filename().string());
  }
  EXPECT_EQ(names.size(), 4u);
}

TEST(OutputFiles, ADirectoryIsNotAnOutputFile) {
  ScratchDirectory dir("out-dir");
  fs::create_directories(dir.file("taken.json"));
  EXPECT_THROW(write_text_atomically(dir.file("taken.json"), "x"), UsageError);
}

TEST(OutputFiles, ANewFileNeverReplacesAnotherRunsFile) {
  ScratchDirectory dir("out-new");
  const std::string wanted = dir.file("resnet50_fp16.json");
  EXPECT_EQ(write_new_file(wanted, "first"), wanted);
  EXPECT_EQ(write_new_file(wanted, "second"), dir.file("resnet50_fp16-2.json"));
  EXPECT_EQ(write_new_file(wanted, "third"), dir.file("resnet50_fp16-3.json"));
  EXPECT_EQ(contents(wanted), "first");
  EXPECT_EQ(contents(dir.file("resnet50_fp16-2.json")), "second");
}

// Eight writers race for one name, twenty times over: every result is there, whole.
TEST(OutputFiles, ConcurrentWritersIntoOneFolderEachKeepTheirFile) {
  for (int round = 0; round < 20; ++round) {
    ScratchDirectory dir("out-race");
    const std::string wanted = dir.file("same_name.json");
    constexpr int kWriters = 8;
    const std::string payload(64 << 10, 'x');
    std::vector<std::string> written(kWriters);
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back(
          [&, w] { written[w] = write_new_file(wanted, std::to_string(w) + payload); });
    }
    for (auto& writer : writers) writer.join();
    std::set<std::string> distinct(written.begin(), written.end());
    ASSERT_EQ(distinct.size(), static_cast<size_t>(kWriters)) << "round " << round;
    std::set<char> owners;
    for (const std::string& path : written) {
      const std::string text = contents(path);
      ASSERT_EQ(text.size(), payload.size() + 1) << path;
      owners.insert(text[0]);
    }
    EXPECT_EQ(owners.size(), static_cast<size_t>(kWriters));
    EXPECT_EQ(dir.files_with_extension(".json").size(), static_cast<size_t>(kWriters));
  }
}

}  // namespace
}  // namespace gpubench
