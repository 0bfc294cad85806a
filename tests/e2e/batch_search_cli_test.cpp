// `--batch-size max` through the binary, against a brute-force scan under --memory-limit, with no
// process left behind by the probes that ran out; in a suite; not even batch 1.
#include <signal.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cpu_benchmark.h"
#include "forked_cli.h"
#include "results/result.h"
#include "run/resolve_benchmark.h"
#include "run/run_benchmark.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::read_json;
using testing::run_command;
using testing::ScratchDirectory;

ResolvedBenchmark tiny_llama(int64_t batch, int64_t memory_limit) {
  ResolvedBenchmark b = testing::cpu_benchmark("test-tiny-llama", batch);
  b.steps = 1;
  b.memory_limit = memory_limit;
  return b;
}

bool session_has_processes(pid_t session) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::getsid(std::stoi(name)) == session) return true;
  }
  return false;
}

TEST(BatchSearchCli, FindsTheBatchABruteForceScanFindsAndLeavesNoProcess) {
  constexpr int64_t kLimit = 8 << 20;
  int64_t brute_force = 0;
  while (run_benchmark(tiny_llama(brute_force + 1, kLimit)).status == RunStatus::kOk) {
    ++brute_force;
  }
  ASSERT_GT(brute_force, 1);

  ScratchDirectory dir("batch-max");
  const std::string session_file = dir.file("session");
  const auto run = run_command(
      "setsid sh -c 'echo $$ > " + session_file + "; exec " + GPUBENCH_BINARY +
      " --log-level warn train --model test-tiny-llama --device cpu --threads 2 --batch-size max "
      "--memory-limit 8M --warmup-steps 1 --steps 1 --repeat 1 --telemetry-interval-ms 0 "
      "--output " +
      dir.file("r.json") + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  pid_t session = 0;
  std::ifstream(session_file) >> session;
  ASSERT_GT(session, 0);
  EXPECT_FALSE(session_has_processes(session));

  const nlohmann::json r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["benchmark"]["batch_size_per_device"], brute_force);
  const auto& search = r["batch_search"];
  EXPECT_EQ(search["found_batch"], brute_force);
  EXPECT_EQ(search["memory_limit_bytes"], kLimit);
  EXPECT_EQ(search["memory_limit_source"], "--memory-limit");
  EXPECT_EQ(search["memory_limit_caps"], "tensor bytes (gpubench's counting CPU allocator)");
  EXPECT_GT(search["predicted_batch"].get<int64_t>(), 0);
  bool ran_out = false, trained_at_found = false;
  for (const auto& probe : search["probes"]) {
    ran_out |= probe["outcome"] == "oom";
    trained_at_found |= probe["batch"] == brute_force && probe["outcome"] == "ok";
    // What ran out is named: the counting allocator's "out of memory".
    if (probe["outcome"] == "oom") {
      EXPECT_EQ(probe.value("oom_cause", ""), "out of memory");
    }
  }
  EXPECT_TRUE(ran_out);
  // The search is one table and one result line, not a table per probe.
  EXPECT_NE(run.output.find("batch search under 8.0 MiB (--memory-limit; it caps tensor bytes"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("result: "), run.output.rfind("result: ")) << run.output;
  EXPECT_TRUE(trained_at_found);
  const Result read = result_from_json(r);
  EXPECT_EQ(read.batch_search.found_batch, brute_force);
  EXPECT_EQ(read.batch_search.probes.size(), search["probes"].size());
}

// The search's probes install gpubench's signal handling (a signal stops the children first).
// Ctrl-C or SIGTERM during the measured run that follows ends it by that signal, within its
// step, with no result written, instead of being noted and ignored while every step runs (here
// 300,000 of them: minutes). The run is signalled once its plan is logged, after the search; a
// run still alive a minute later is killed and reported.
TEST(BatchSearchCli, ASignalAfterTheSearchEndsTheRunByThatSignalWithNoResult) {
  for (const int signal_number : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(signal_number);
    ScratchDirectory dir("batch-max-signal");
    const std::string log = dir.file("log"), result = dir.file("r.json");
    const auto run = run_command(
        std::string(GPUBENCH_BINARY) +
        " --log-level info train --model test-tiny-llama --device cpu --threads 1 --batch-size "
        "max --memory-limit 8M --warmup-steps 100000 --steps 100000 --repeat 2 "
        "--telemetry-interval-ms 0 --output " +
        result + " > " + log + " 2>&1 & pid=$!; for i in $(seq 1200); do grep -q 'warm-up +' " +
        log + " && break; sleep 0.1; done; kill -" + std::to_string(signal_number) +
        " $pid; for i in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done; "
        "kill -0 $pid 2>/dev/null && { echo still running; kill -9 $pid; }; wait $pid; "
        "echo exit=$?");
    EXPECT_EQ(run.output.find("still running"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("exit=" + std::to_string(128 + signal_number)), std::string::npos)
        << run.output;
    EXPECT_FALSE(std::filesystem::exists(result));
  }
}

TEST(BatchSearchCli, ASuiteEntryMaySayMax) {
  ScratchDirectory dir("batch-max-suite");
  {
    std::ofstream suite(dir.file("suite.yaml"));
    suite << "defaults: {device: cpu, threads: 2, warmup_steps: 1, steps: 1, repeat: 1, "
             "telemetry_interval_ms: 0, memory_limit: 8M}\n"
             "benchmarks:\n  - model: test-tiny-llama\n    batch_size: max\n";
  }
  const auto run = testing::run_gpubench("--log-level warn run " + dir.file("suite.yaml") +
                                         " --output " + dir.file("out"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    files.push_back(entry.path().string());
  }
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("_bsmax_"), std::string::npos) << files[0];
  const nlohmann::json r = read_json(files[0]);
  EXPECT_EQ(r["status"], "ok");
  EXPECT_GT(r["batch_search"]["found_batch"].get<int64_t>(), 1);
  EXPECT_EQ(r["benchmark"]["batch_size_per_device"], r["batch_search"]["found_batch"]);
}

// ResNet-50's weights alone (about 100 MB) are far above 1 MiB, the least limit a search takes,
// on every LibTorch (the tiny Llama trains within 1 MiB on 2.11).
TEST(BatchSearchCli, NotEvenBatchOneIsAnOomResult) {
  ScratchDirectory dir("batch-max-none");
  const auto run = testing::run_gpubench(
      "--log-level warn train --model resnet50 --device cpu --batch-size max "
      "--memory-limit 1M --warmup-steps 1 --steps 1 --repeat 1 --output " +
      dir.file("r.json"));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  const nlohmann::json r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "oom");
  EXPECT_EQ(r["batch_search"]["found_batch"], 0);
  EXPECT_NE(r["error"].get<std::string>().find("no batch trains"), std::string::npos);
}

// SSD300 trains from batch 2 (its batch norm sees a 1x1 map): the search's fit and every probe
// start there, where fit at batch 1 was refused and the search fell back to 1 (hostile input,
// round 4).
TEST(BatchSearchCli, AModelsLeastTrainingBatchIsWhereTheSearchStarts) {
  ScratchDirectory dir("batch-max-least");
  const auto run = testing::run_gpubench(
      "--log-level warn train --model test-tiny-ssd --device cpu --batch-size max "
      "--memory-limit 64M --warmup-steps 1 --steps 1 --repeat 1 --output " +
      dir.file("r.json"));
  EXPECT_EQ(run.output.find("the search starts at batch"), std::string::npos) << run.output;
  const nlohmann::json r = read_json(dir.file("r.json"));
  EXPECT_GE(r["batch_search"]["predicted_batch"].get<int64_t>(), 2) << r.dump();
  for (const nlohmann::json& probe : r["batch_search"]["probes"]) {
    EXPECT_GE(probe["batch"].get<int64_t>(), 2) << r.dump();
  }
}

// The search hands its limit to a fit child as a card's size: a limit under fit's least is the
// user's error, named as the user gave it, not the child's option.
TEST(BatchSearchCli, ALimitUnderOneMebibyteIsRefusedUpFront) {
  for (const char* limit : {"1K", "1023K"}) {
    testing::expect_refused(
        std::string("train --model test-tiny-llama --device cpu --batch-size max --memory-limit ") +
            limit,
        "is under 1 MiB, the least a batch search (--batch-size max) takes");
  }
  const auto run = testing::run_gpubench(
      "train --model test-tiny-llama --device cpu --batch-size max --memory-limit 1K");
  EXPECT_NE(run.output.find("--memory-limit 1024 bytes"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("--memory "), std::string::npos) << run.output;  // fit's option
}

// A model whose steady state needs warm-up steps (Transformer-XL's memory: mem_len / tgt_len +
// 2) finds a batch: a probe runs its benchmark file as given, never resolved again, so no probe
// is refused for its warm-up (fewest_warmup_steps, tested in Resolve, gives it the model's and
// the mode's fewest).
TEST(BatchSearchCli, AModelThatNeedsWarmUpStepsIsProbedWithThem) {
  ScratchDirectory dir("batch-max-warmup");
  const auto run = testing::run_gpubench(
      "--log-level warn train --model test-tiny-transformerxl --device cpu --threads 1 "
      "--batch-size max --memory-limit 1M --warmup-steps 3 --steps 1 --repeat 1 "
      "--telemetry-interval-ms 0 --output " +
      dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "ok") << r.value("error", "");
  EXPECT_GT(r["batch_search"]["found_batch"].get<int64_t>(), 0);
  for (const auto& probe : r["batch_search"]["probes"]) {
    EXPECT_NE(probe["outcome"], "failed") << probe.dump();
  }
}

}  // namespace
}  // namespace gpubench
