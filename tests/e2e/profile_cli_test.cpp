// --profile through the binary (docs/profiling.md): the trace is valid Chrome trace JSON with
// the model's aten ops, forward, backward and optimiser, inside exactly the profiled steps; the
// result's figures come from the unprofiled trials and say that it was profiled; an existing
// trace is never written over; bad paths are usage errors; scripts/profile_diff.py tables two
// real traces.
#include <gtest/gtest.h>

#include <fstream>

#include "forked_cli.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::expect_refused;
using testing::read_json;
using testing::run_command;
using testing::run_gpubench;
using testing::ScratchDirectory;

struct TraceFacts {
  int steps = 0;
  double first_step_start = 1e300, last_step_end = -1e300;
  std::set<std::string> ops;  // names of the aten ops and autograd functions
  bool ops_inside_steps = true;
  std::string outside;
};

TraceFacts read_trace(const std::string& path) {
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);  // throws on invalid JSON
  EXPECT_TRUE(trace.is_object() && trace.contains("traceEvents")) << path;
  TraceFacts facts;
  const auto& events = trace.at("traceEvents");
  for (const auto& e : events) {
    if (e.value("ph", "") != "X") continue;
    const std::string name = e.value("name", "");
    if (name.rfind("ProfilerStep#", 0) == 0) {
      ++facts.steps;
      const double ts = e.at("ts").get<double>();
      facts.first_step_start = std::min(facts.first_step_start, ts);
      facts.last_step_end = std::max(facts.last_step_end, ts + e.value("dur", 0.0));
    }
  }
  for (const auto& e : events) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "cpu_op") continue;
    const std::string name = e.value("name", "");
    facts.ops.insert(name);
    const double ts = e.at("ts").get<double>();
    // Kineto's microseconds are rounded to 1 ns in the file.
    if (ts < facts.first_step_start - 0.01 ||
        ts + e.value("dur", 0.0) > facts.last_step_end + 0.01) {
      facts.ops_inside_steps = false;
      facts.outside = name;
    }
  }
  return facts;
}

bool has_op_containing(const TraceFacts& facts, const std::string& part) {
  for (const std::string& op : facts.ops) {
    if (op.find(part) != std::string::npos) return true;
  }
  return false;
}

const char* kProfiledTrain =
    "train --model test-tiny-cnn --device cpu --batch-size 2 --warmup-steps 1 --steps 3 "
    "--repeat 2";

TEST(ProfileCli, TrainWritesATraceOfTheProfiledStepsOnly) {
  ScratchDirectory dir("profile-train");
  const auto run = run_gpubench(std::string(kProfiledTrain) + " --profile " +
                                dir.file("trace.json") + " --output " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  const auto& profile = r.at("profile");
  EXPECT_EQ(profile["trace"], dir.file("trace.json"));
  EXPECT_EQ(profile["steps"], 3);
  const bool legacy = r["system"]["libtorch"].get<std::string>().rfind("1.", 0) == 0;
  EXPECT_EQ(profile["profiler"], legacy ? "legacy" : "kineto");
  EXPECT_GT(profile["throughput"].get<double>(), 0);
  EXPECT_EQ(r["benchmark"]["profile"], dir.file("trace.json"));
  // The figures are the two measured trials', not the profiled one's.
  ASSERT_EQ(r["metrics"]["trials"].size(), 2u);

  const TraceFacts trace = read_trace(dir.file("trace.json"));
  EXPECT_EQ(trace.steps, 3);
  EXPECT_TRUE(trace.ops.count("aten::conv2d")) << "the model's forward";
  EXPECT_TRUE(has_op_containing(trace, "ConvolutionBackward")) << "its backward";
  EXPECT_TRUE(has_op_containing(trace, "aten::_foreach_")) << "its optimiser";
  EXPECT_TRUE(trace.ops_inside_steps) << trace.outside << " lies outside the profiled steps";
  EXPECT_NE(run.output.find("profile: " + dir.file("trace.json")), std::string::npos) << run.output;
}

TEST(ProfileCli, AnExistingTraceIsKeptAndTheNextGetsANewName) {
  ScratchDirectory dir("profile-exists");
  std::ofstream(dir.file("trace.json")) << "someone else's file";
  const auto run = run_gpubench(std::string(kProfiledTrain) + " --profile " +
                                dir.file("trace.json") + " --output " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream kept(dir.file("trace.json"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "someone else's file");
  const auto r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["profile"]["trace"], dir.file("trace-2.json"));
  EXPECT_EQ(read_trace(dir.file("trace-2.json")).steps, 3);
}

TEST(ProfileCli, InferenceAndGenerationAreProfiled) {
  ScratchDirectory dir("profile-infer");
  const auto forward = run_gpubench(
      "infer --model test-tiny-cnn --device cpu --batch-size 2 --warmup-steps 1 --steps 2 "
      "--repeat 1 --profile " +
      dir.file("forward.json") + " --output " + dir.file("f.json"));
  ASSERT_EQ(forward.exit_code, 0) << forward.output;
  const TraceFacts forward_trace = read_trace(dir.file("forward.json"));
  EXPECT_EQ(forward_trace.steps, 2);
  EXPECT_TRUE(forward_trace.ops.count("aten::conv2d"));
  EXPECT_FALSE(has_op_containing(forward_trace, "Backward"));
  const auto generate = run_gpubench(
      "infer --model test-tiny-llama --device cpu --batch-size 1 --prompt-len 4 --gen-len 3 "
      "--warmup-steps 1 --steps 2 --repeat 1 --profile " +
      dir.file("generate.json") + " --output " + dir.file("g.json"));
  ASSERT_EQ(generate.exit_code, 0) << generate.output;
  EXPECT_EQ(read_trace(dir.file("generate.json")).steps, 2);
  EXPECT_EQ(read_json(dir.file("g.json"))["profile"]["steps"], 2);
}

TEST(ProfileCli, ANotProfiledResultHasNoProfileBlock) {
  ScratchDirectory dir("profile-none");
  const auto run = run_gpubench(std::string(kProfiledTrain) + " --output " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  EXPECT_FALSE(r.contains("profile"));
  EXPECT_EQ(r["benchmark"]["profile"], "");
}

TEST(ProfileCli, BadTracePathsAreUsageErrors) {
  ScratchDirectory dir("profile-bad");
  expect_refused(std::string(kProfiledTrain) + " --profile " + dir.file("missing/trace.json"),
                 "profile '" + dir.file("missing/trace.json") + "': its folder");
  expect_refused(std::string(kProfiledTrain) + " --profile " + dir.path(), "is a directory");
  expect_refused(std::string(kProfiledTrain) + " --profile ''",
                 "profile must be a non-empty string");
  expect_refused("fit --model test-tiny-cnn --device cpu --profile " + dir.file("t.json"),
                 "--profile applies to train and infer");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// Name and path limits are found before the run (exit 2), not after every trial as a failed
// run: the trace keeps room for the -N suffix a new file may take.
TEST(ProfileCli, TooLongNamesAreRefusedBeforeTheRun) {
  ScratchDirectory dir("profile-long");
  const std::string long_name(300, 'a');
  expect_refused(std::string(kProfiledTrain) + " --profile " + dir.file(long_name + ".json"),
                 "its file name is");
  expect_refused(
      std::string(kProfiledTrain) + " --profile " + dir.file(std::string(250, 'b') + ".json"),
      "with room for a -N suffix");
  expect_refused(std::string(kProfiledTrain) + " -o " + dir.file(long_name + ".json"),
                 "its file name is");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// A trace at a device is written into, as an output is: no file is created beside it.
TEST(ProfileCli, ATraceAtADeviceIsWrittenIntoNotBesideIt) {
  ScratchDirectory dir("profile-device");
  const auto run =
      run_gpubench(std::string(kProfiledTrain) + " --profile /dev/null -o " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(read_json(dir.file("r.json"))["profile"]["trace"], "/dev/null");
  EXPECT_FALSE(std::filesystem::exists("/dev/null-2"));
}

// A batch search's probes and its fit child never profile: the requested path receives the
// measured run's trace, and no second trace appears beside it.
TEST(ProfileCli, ABatchSearchProfilesTheMeasuredRunOnly) {
  ScratchDirectory dir("profile-batch-max");
  const auto run = run_gpubench(
      "--log-level warn train --model test-tiny-llama --device cpu --threads 2 --batch-size max "
      "--memory-limit 8M --warmup-steps 1 --steps 2 --repeat 1 --telemetry-interval-ms 0 "
      "--profile " +
      dir.file("t.json") + " -o " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find("search starts at batch 1"), std::string::npos) << run.output;
  const auto r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["profile"]["trace"], dir.file("t.json"));
  EXPECT_GT(r["batch_search"]["probes"].size(), 1u);
  EXPECT_EQ(read_trace(dir.file("t.json")).steps, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("t-2.json")));
}

// A trace saved beside the results it belongs to is no result: `report` of the folder passes over
// it and says so, while the trace named on its own is still refused as a result.
TEST(ProfileCli, AReportOfAFolderWithATraceSkipsTheTrace) {
  ScratchDirectory dir("profile-in-results");
  const auto run = run_gpubench(std::string(kProfiledTrain) + " --profile " + dir.file("t.json") +
                                " -o " + dir.path());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  testing::expect_report_passes_over(dir.path(), dir.file("t.json"), "1 profiler trace(s)",
                                     "test-tiny-cnn");
}

// A file name that is not UTF-8 (Linux allows any bytes but '/' and NUL): the run writes its
// result, the name in it with U+FFFD for the bad byte, where the JSON writer threw after the run.
TEST(ProfileCli, ATraceNamedInBytesThatAreNotUtf8IsRecorded) {
  ScratchDirectory dir("profile-bytes");
  const std::string trace = dir.file("t\xff.json");
  const auto run = run_gpubench(std::string(kProfiledTrain) + " --profile '" + trace + "' -o " +
                                dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(std::filesystem::exists(trace));
  const auto r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["profile"]["trace"], dir.file("t\xEF\xBF\xBD.json"));
}

// The result would replace the trace, and name itself as the trace: refused before the run,
// however the two paths spell the one file (as given, through `.` and `..`, through a link).
TEST(ProfileCli, ATraceAndAResultAtOneFileAreRefused) {
  ScratchDirectory dir("profile-same-file");
  std::filesystem::create_directory(dir.file("sub"));
  std::filesystem::create_directory_symlink(dir.path(), dir.file("link"));
  const std::string trace = dir.file("t.json");
  for (const std::string& result :
       {trace, dir.file("sub/../t.json"), dir.path() + "/./t.json", dir.file("link/t.json")}) {
    expect_refused(std::string(kProfiledTrain) + " --profile " + trace + " -o " + result,
                   "are the same file");
  }
  EXPECT_FALSE(std::filesystem::exists(trace));
}

TEST(ProfileCli, ProfileDiffTablesTwoTraces) {
  ScratchDirectory dir("profile-diff");
  for (const char* side : {"a", "b"}) {
    const auto run = run_gpubench(std::string(kProfiledTrain) + " --profile " + dir.file(side) +
                                  ".json --output " + dir.file(std::string(side) + "-r.json"));
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  const std::string script = std::string(GPUBENCH_SOURCE_DIR) + "/scripts/profile_diff.py";
  const auto diff = run_command("python3 " + script + " " + dir.file("a.json") + " " +
                                dir.file("b.json") + " --names one,two --format json");
  ASSERT_EQ(diff.exit_code, 0) << diff.output;
  const nlohmann::json table = nlohmann::json::parse(diff.output);
  EXPECT_EQ(table["steps"], nlohmann::json({3, 3}));
  bool conv = false;
  for (const auto& row : table["host"]) {
    if (row["op"] != "aten::conv2d") continue;
    conv = true;
    EXPECT_DOUBLE_EQ(row["calls_a"].get<double>(), 2.0) << "two convolutions a step";
    EXPECT_DOUBLE_EQ(row["calls_b"].get<double>(), 2.0);
  }
  EXPECT_TRUE(conv) << diff.output;
  const auto markdown = run_command("python3 " + script + " " + dir.file("a.json") + " " +
                                    dir.file("b.json") + " --top 5");
  ASSERT_EQ(markdown.exit_code, 0) << markdown.output;
  EXPECT_NE(markdown.output.find("| op | calls/step gpubench | calls/step pytorch |"),
            std::string::npos)
      << markdown.output;
  const auto not_a_trace =
      run_command("python3 " + script + " " + dir.file("a-r.json") + " " + dir.file("b.json"));
  EXPECT_EQ(not_a_trace.exit_code, 2) << not_a_trace.output;
  EXPECT_NE(not_a_trace.output.find("no traceEvents"), std::string::npos) << not_a_trace.output;
}

}  // namespace
}  // namespace gpubench
