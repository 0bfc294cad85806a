// `gpubench train --gpus N` and `gpubench allreduce` on CPU ranks (Gloo): multi-rank results,
// joining a torchrun-style launch, and dead or hung ranks failing the run within the timeout.
#include <signal.h>
#include <algorithm>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "forked_cli.h"
#include "launcher/child_process.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::expect_refused;
using testing::read_json;
using testing::run_command;
using testing::run_gpubench;
using testing::ScratchDirectory;

const std::string kTinyRun =
    " --device cpu --batch-size 1 --warmup-steps 1 --steps 2 --repeat 1 --threads 1";

using testing::processes_left;

// A free port: the kernel's pick for a socket that is closed again at once.
std::string free_port() {
  const auto port = run_command(
      "python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); "
      "print(s.getsockname()[1])\"");
  return port.output.substr(0, port.output.find('\n'));
}

// Two ranks started by hand with torchrun's variables; returns each rank's exit code.
std::vector<int> run_as_torchrun(const std::string& arguments,
                                 const EnvironmentOverrides& extra = {}) {
  const std::string port = free_port();
  std::vector<std::string> argv{GPUBENCH_BINARY, "--log-level", "warn"};
  std::istringstream words(arguments);
  for (std::string word; words >> word;) argv.push_back(word);
  std::vector<ChildProcess> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    EnvironmentOverrides environment = {
        {"RANK", std::to_string(rank)},       {"WORLD_SIZE", "2"},
        {"LOCAL_RANK", std::to_string(rank)}, {"LOCAL_WORLD_SIZE", "2"},
        {"MASTER_ADDR", "127.0.0.1"},         {"MASTER_PORT", port}};
    environment.insert(environment.end(), extra.begin(), extra.end());
    ranks.emplace_back(argv, environment, false);
  }
  std::vector<int> codes;
  for (auto& rank : ranks) codes.push_back(rank.wait().exit_code);
  return codes;
}

TEST(DataParallelCli, FourCpuRanksRecordAFourRankResult) {
  ScratchDirectory dir("dp-four");
  const std::string path = dir.file("r.json");
  // One timed step and no warm-up of a tiny model: what this checks (four ranks' result, their
  // gradients' one bucket) is the same at any count and size. A real model's buckets:
  // distributed/gradient_buckets_test.cpp.
  const auto run = run_gpubench(
      "train --model test-tiny-cnn --gpus 4 --device cpu --batch-size 1 --warmup-steps 0 "
      "--steps 1 --repeat 1 --threads 1 --output " +
      path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto result = read_json(path);
  EXPECT_EQ(result["status"], "ok");
  EXPECT_EQ(result["benchmark"]["gpus"], 4);
  EXPECT_EQ(result["benchmark"]["global_batch_size"], 4);
  EXPECT_EQ(result["benchmark"]["bucket_mb"], 25);
  const auto& distributed = result["distributed"];
  EXPECT_EQ(distributed["world_size"], 4);
  EXPECT_EQ(distributed["nodes"], 1);
  EXPECT_EQ(distributed["backend"], "gloo");
  EXPECT_EQ(distributed["launcher"], "gpubench");
  EXPECT_EQ(distributed["gradient_bytes"], result["benchmark"]["params"].get<int64_t>() * 4);
  EXPECT_EQ(distributed["buckets"], 1);
  EXPECT_GT(distributed["exposed_communication_ms"].get<double>(), 0.0);
  const auto& metrics = result["metrics"];
  EXPECT_GT(metrics["throughput"].get<double>(), 0.0);
  EXPECT_NEAR(metrics["per_device_throughput"].get<double>(),
              metrics["throughput"].get<double>() / 4, 1e-9);
  EXPECT_EQ(dir.files_with_extension(".json").size(), 1u) << "only the run's result";
}

TEST(DataParallelCli, TorchrunEnvironmentJoinsAsTheGivenRanks) {
  ScratchDirectory dir("dp-torchrun");
  const auto codes =
      run_as_torchrun("train --model test-tiny-cnn" + kTinyRun + " --output " + dir.path());
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
  const auto files = dir.files_with_extension(".json");
  ASSERT_EQ(files.size(), 1u) << "rank 0 alone writes the result";
  const auto result = read_json(files.front());
  EXPECT_EQ(result["status"], "ok");
  EXPECT_EQ(result["benchmark"]["gpus"], 2);
  EXPECT_EQ(result["distributed"]["world_size"], 2);
  EXPECT_EQ(result["distributed"]["launcher"], "torchrun");
}

// infer --gpus N: N replicas through the launcher's rank path, each serving its own batch; the
// result's throughput is theirs summed, and the bucket setting (training's) is not its identity.
void expect_summed_replicas(const nlohmann::json& result, const std::string& launcher) {
  ASSERT_EQ(result["status"], "ok") << result.value("error", "");
  EXPECT_EQ(result["benchmark"]["task"], "infer");
  EXPECT_EQ(result["benchmark"]["gpus"], 2);
  EXPECT_EQ(result["distributed"]["world_size"], 2);
  EXPECT_EQ(result["distributed"]["launcher"], launcher);
  EXPECT_EQ(result["distributed"]["buckets"], 0);
  EXPECT_NE(result["distributed"]["gradient_sync"].get<std::string>().find("replicas"),
            std::string::npos);
  const auto& metrics = result["metrics"];
  EXPECT_GT(metrics["throughput"].get<double>(), 0.0);
  EXPECT_NEAR(metrics["per_device_throughput"].get<double>(),
              metrics["throughput"].get<double>() / 2, 1e-9);
  EXPECT_EQ(metrics["inference"]["request_latency_ms"]["count"], 2);  // rank 0's: steps x repeat
}

TEST(DataParallelCli, InferWithTwoCpuRanksSumsTheReplicasThroughput) {
  ScratchDirectory dir("dp-infer");
  const std::string path = dir.file("r.json");
  const auto run =
      run_gpubench("infer --model test-tiny-cnn --gpus 2" + kTinyRun + " --output " + path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  expect_summed_replicas(read_json(path), "gpubench");
  EXPECT_EQ(dir.files_with_extension(".json").size(), 1u) << "only the run's result";
}

TEST(DataParallelCli, InferUnderTorchrunJoinsAsTheGivenRanks) {
  ScratchDirectory dir("dp-infer-torchrun");
  const auto codes =
      run_as_torchrun("infer --model test-tiny-cnn" + kTinyRun + " --output " + dir.path());
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
  const auto files = dir.files_with_extension(".json");
  ASSERT_EQ(files.size(), 1u) << "rank 0 alone writes the result";
  expect_summed_replicas(read_json(files.front()), "torchrun");
}

// --tensor-parallel 2 over 2 CPU ranks: one replica of the test Llama (2 blocks) split in two.
// A training step's collectives: the embedding's sum, each block's two row-parallel sums and
// the cross-entropy's three in forward; each block's two input copies and the head's in
// backward (13). A decode step's: the embedding, the blocks' four sums and the logits' gather
// (6). Both the own launcher and torchrun's variables.
void expect_one_split_replica(const nlohmann::json& result, int64_t collectives) {
  ASSERT_EQ(result["status"], "ok") << result.value("error", "");
  const auto& distributed = result["distributed"];
  EXPECT_EQ(distributed["world_size"], 2);
  EXPECT_EQ(distributed["tensor_parallel"], 2);
  EXPECT_EQ(distributed["tensor_parallel_collectives"], collectives);
  EXPECT_GT(distributed["tensor_parallel_exposed_ms"].get<double>(), 0.0);
  const auto& metrics = result["metrics"];
  EXPECT_NEAR(metrics["per_device_throughput"].get<double>(),
              metrics["throughput"].get<double>() / 2, 1e-9);
}

TEST(DataParallelCli, TensorParallelRanksTrainAndGenerateAsOneReplica) {
  ScratchDirectory dir("tp-cli");
  const std::string model = " --model test-tp-llama --tensor-parallel 2" + kTinyRun;
  const auto train =
      run_gpubench("train --gpus 2 --seq-len 8" + model + " --output " + dir.file("train.json"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto trained = read_json(dir.file("train.json"));
  expect_one_split_replica(trained, 13);
  EXPECT_EQ(trained["benchmark"]["tensor_parallel"], 2);
  const auto codes = run_as_torchrun("infer --prompt-len 8 --gen-len 4" + model + " --output " +
                                     dir.file("infer.json"));
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
  const auto generated = read_json(dir.file("infer.json"));
  expect_one_split_replica(generated, 6);
  EXPECT_EQ(generated["distributed"]["launcher"], "torchrun");
  EXPECT_GT(generated["distributed"]["tensor_parallel_prefill_exposed_ms"].get<double>(), 0.0);
}

// --shard over 2 CPU ranks (float32, the test Llama: 2 blocks), through the own launcher and
// torchrun's variables, against DDP on the same batches: the same loss (the same sums in another
// order), and rank 0's weights, gradients and optimiser states, counted from its tensors in the
// memory breakdown, half of DDP's (up to a unit's padding); `grads` keeps the whole weights
// besides its master shards.
TEST(DataParallelCli, ShardedRanksTrainAsDdpHoldingHalfOfItsState) {
  ScratchDirectory dir("shard-cli");
  const std::string recipe = " --model test-tp-llama --seq-len 8" + kTinyRun;
  std::map<std::string, nlohmann::json> results;
  for (const std::string shard : {"none", "full"}) {
    const auto run = run_gpubench("train --gpus 2 --shard " + shard + recipe + " --output " +
                                  dir.file(shard + ".json"));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    results[shard] = read_json(dir.file(shard + ".json"));
  }
  EXPECT_EQ(run_as_torchrun("train --shard grads" + recipe + " --output " + dir.file("grads.json")),
            (std::vector<int>{0, 0}));
  results["grads"] = read_json(dir.file("grads.json"));
  const auto& ddp = results["none"]["metrics"];
  for (const std::string shard : {"full", "grads"}) {
    SCOPED_TRACE(shard);
    const auto& result = results[shard];
    ASSERT_EQ(result["status"], "ok") << result.value("error", "");
    EXPECT_EQ(result["benchmark"]["shard"], shard);
    const auto& distributed = result["distributed"];
    EXPECT_EQ(distributed["buckets"], 3);  // reduce-scatters: the root and the 2 blocks
    EXPECT_EQ(distributed["gradient_bytes"], results["none"]["distributed"]["gradient_bytes"]);
    // full gathers each block twice (forward, backward) and the root once; grads once each.
    EXPECT_GT(distributed["gathered_bytes"].get<int64_t>(), 0);
    EXPECT_NE(distributed["gradient_sync"].get<std::string>().find("sharded"), std::string::npos);
    const auto& metrics = result["metrics"];
    EXPECT_NEAR(metrics["final_loss"].get<double>(), ddp["final_loss"].get<double>(), 1e-5);
    const auto& mine = metrics["memory"];
    const auto& theirs = ddp["memory"];
    // A float32 element of padding a unit; AdamW's step counts (on 2.x a 4-byte tensor a
    // parameter tensor: DDP has a count for each of the model's, sharding one a unit).
    const double padding = 3 * 4, step_counts = 4 * 32;
    EXPECT_NEAR(mine["gradients"].get<double>(), theirs["gradients"].get<double>() / 2, padding);
    EXPECT_NEAR(mine["optimizer_states"].get<double>(),
                theirs["optimizer_states"].get<double>() / 2, 2 * padding + step_counts);
    const double whole = theirs["weights"].get<double>();
    EXPECT_NEAR(mine["weights"].get<double>(), whole / 2 + (shard == "grads" ? whole : 0), padding);
  }
  EXPECT_EQ(results["grads"]["distributed"]["launcher"], "torchrun");
  // grads gathers every unit once, in float32 here: the bytes its gradients reduce-scatter; full
  // the blocks twice.
  const auto gathered = [&](const std::string& shard) {
    return results[shard]["distributed"]["gathered_bytes"].get<int64_t>();
  };
  EXPECT_EQ(gathered("grads"), results["grads"]["distributed"]["gradient_bytes"].get<int64_t>());
  EXPECT_GT(gathered("full"), gathered("grads"));
  EXPECT_LT(gathered("full"), 2 * gathered("grads"));
}

// One process as a launcher's world of one (torchrun's variables), with its output.
testing::CommandResult run_as_group_of_one(const std::string& arguments) {
  return run_command(
      "RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
      free_port() + " " + std::string(GPUBENCH_BINARY) + " --log-level warn " + arguments);
}

// A launcher's world of one joins a process group and all-reduces, as the NCCL group of one
// does on a GPU. The exposed communication of its timed steps is read once the device has been
// synchronised past them (on the CPU too: torch_support/device_timers.h), and not the untimed step
// that measures memory after them: read after that step, the run was recorded as failed.
TEST(DataParallelCli, AGroupOfOneReadsItsTimedStepsCommunicationAndSucceeds) {
  ScratchDirectory dir("dp-group-of-one");
  const std::string path = dir.file("r.json");
  const auto run = run_as_group_of_one(
      "train --model test-tiny-cnn --device cpu --batch-size 1 --warmup-steps 1 --steps 3 "
      "--repeat 2 --threads 1 --output " +
      path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto result = read_json(path);
  ASSERT_EQ(result["status"], "ok") << result.value("error", "");
  const auto& distributed = result["distributed"];
  EXPECT_EQ(distributed["world_size"], 1);
  EXPECT_EQ(distributed["backend"], "gloo");
  EXPECT_EQ(distributed["launcher"], "torchrun");
  EXPECT_GE(distributed["buckets"].get<int>(), 1);
  EXPECT_GT(distributed["exposed_communication_ms"].get<double>(), 0.0);
  EXPECT_EQ(result["metrics"]["trials"].size(), 2u);
}

// Graph mode is decided from the process group, not from --gpus: a world of one still joins
// one and all-reduces from autograd hooks, which a capture cannot hold.
TEST(DataParallelCli, GraphModeUnderALauncherIsRefusedEvenForAWorldOfOne) {
  ScratchDirectory dir("dp-graph-group");
  const auto run = run_as_group_of_one("train --model test-tiny-cnn --mode graph" + kTinyRun +
                                       " --output " + dir.path());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("graph mode runs without a process group, but torchrun started this "
                            "process as one of 1 rank(s)"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(dir.files_with_extension(".json").empty());
}

// Two ranks under gpubench's launcher with `fault` injected into rank 1: the run must fail with
// a failed result and no process left. Returns the result's error, which says whether the run
// ended on the rank's death or on the peers' --timeout.
std::string failed_two_rank_run(const std::string& name, const std::string& fault,
                                int timeout_seconds) {
  ScratchDirectory dir(name);
  const std::string path = dir.file("r.json");
  const auto run =
      run_command("GPUBENCH_FAULT_INJECTION=" + fault + " " + std::string(GPUBENCH_BINARY) +
                  " train --model test-tiny-cnn --gpus 2" + kTinyRun + " --timeout " +
                  std::to_string(timeout_seconds) + " --output " + path);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  const auto result = read_json(path);
  EXPECT_EQ(result["status"], "failed");
  EXPECT_EQ(result["distributed"]["world_size"], 2);
  EXPECT_EQ(processes_left(), std::vector<std::string>{});
  return result.value("error", "");
}

// At once: on the rank's death, not on the survivor's timeout (600 s, past the test's limit).
TEST(DataParallelCli, ADeadRankFailsTheRunAtOnceAndLeavesNoProcess) {
  const std::string error = failed_two_rank_run("dp-dead", "abort:rank1", 600);
  EXPECT_NE(error.find("rank 1 killed by signal 6"), std::string::npos) << error;
  EXPECT_EQ(error.find("Timed out"), std::string::npos) << error;
}

// In gpubench's words, not Gloo's: who waited, for how long, and which rank stopped answering.
TEST(DataParallelCli, AHungRankFailsTheOthersWithinTheTimeout) {
  const std::string error = failed_two_rank_run("dp-hung", "hang:rank1", 3);
  EXPECT_NE(error.find("rank 0: no answer from a peer rank for 3.0 s"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 1 was still running (stopped or hung) and was ended"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("Timed out"), std::string::npos) << error;
  EXPECT_EQ(error.find(".cc:"), std::string::npos) << error;
}

TEST(DataParallelCli, UnderTorchrunAPeerThatDiesFailsRankZeroOnItsOwn) {
  ScratchDirectory dir("dp-torchrun-dead");
  // Rank 0 learns of the death from its connection to the peer, not from its timeout (600 s,
  // past the test's limit).
  const auto codes = run_as_torchrun(
      "train --model test-tiny-cnn" + kTinyRun + " --timeout 600 --output " + dir.path(),
      {{"GPUBENCH_FAULT_INJECTION", "abort:rank1"}});
  EXPECT_EQ(codes[0], 1);
  const auto files = dir.files_with_extension(".json");
  ASSERT_EQ(files.size(), 1u);
  const auto result = read_json(files.front());
  EXPECT_EQ(result["status"], "failed");
  EXPECT_FALSE(result["error"].get<std::string>().empty());
  EXPECT_EQ(result["error"].get<std::string>().find("Timed out"), std::string::npos)
      << result["error"];
  EXPECT_EQ(processes_left(), std::vector<std::string>{});
}

// A rank whose master never answers ends at --timeout in one line of gpubench's own: c10d's
// glog preamble and its retry lines go to --log-level debug (hostile input, round 4, cause 3).
TEST(DataParallelCli, AMasterThatNeverAnswersEndsInOneLine) {
  ScratchDirectory dir("dp-no-master");
  const std::string launch =
      "RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + free_port() + " " +
      std::string(GPUBENCH_BINARY) + " ";
  const std::string train =
      "train --model test-tiny-cnn" + kTinyRun + " --timeout 2 --output " + dir.path();
  const auto quiet = run_command(launch + train);
  EXPECT_EQ(quiet.exit_code, 1) << quiet.output;
  EXPECT_EQ(std::count(quiet.output.begin(), quiet.output.end(), '\n'), 1) << quiet.output;
  EXPECT_NE(quiet.output.find("rank 1 could not join the other 1 rank(s) at 127.0.0.1:"),
            std::string::npos)
      << quiet.output;
  const auto debug = run_command(launch + "--log-level debug " + train);
  EXPECT_NE(debug.output.find("[debug] c10d while joining: "), std::string::npos) << debug.output;
  EXPECT_EQ(processes_left(), std::vector<std::string>{});
}

TEST(DataParallelCli, ASuiteKillsAHungMultiRankBenchmarkAndGoesOn) {
  ScratchDirectory dir("dp-suite");
  std::ofstream(dir.file("suite.yaml"))
      << "defaults: {model: test-tiny-cnn, device: cpu, gpus: 2, batch_size: 1, warmup_steps: 1, "
         "steps: 2, repeat: 1, threads: 1}\nbenchmarks:\n  - precision: [bf16, fp32]\n";
  // The healthy benchmark is tiny, so that a loaded machine cannot push it past the timeout.
  // The private folders (the suite's, the ranks') under TMPDIR inside the scratch folder, so
  // that every process of the run carries its path.
  std::filesystem::create_directories(dir.file("tmp"));
  const auto run =
      run_command("TMPDIR=" + dir.file("tmp") + " GPUBENCH_FAULT_INJECTION=hang:bf16 " +
                  std::string(GPUBENCH_BINARY) + " run " + dir.file("suite.yaml") +
                  " --timeout 6 --output " + dir.file("out"));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  std::map<std::string, nlohmann::json> results;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    const auto result = read_json(entry.path().string());
    results[result["benchmark"]["precision"].get<std::string>()] = result;
  }
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results["bf16"]["status"], "failed");
  // Its ranks, started by the suite itself (no child between them), ended together.
  EXPECT_EQ(results["bf16"]["error"],
            "timed out after 6 s; ranks 0, 1 were still running (stopped or hung) and were ended");
  // Recorded by the suite on the benchmark's behalf, built like the benchmark's own.
  EXPECT_EQ(results["bf16"]["distributed"]["world_size"], 2);
  EXPECT_EQ(results["bf16"]["distributed"]["launcher"], "gpubench");
  EXPECT_EQ(results["bf16"]["distributed"]["backend"], "gloo");
  EXPECT_EQ(results["fp32"]["status"], "ok");
  EXPECT_EQ(results["fp32"]["distributed"]["world_size"], 2);
  EXPECT_EQ(processes_left(), std::vector<std::string>{});
}

// SIGTERM, and an SSH session's SIGHUP alike: every rank stops, the private folder under TMPDIR
// is removed and the launcher ends by the same signal.
TEST(DataParallelCli, SigtermOrSighupToTheLauncherStopsEveryRankAndLeavesNoFolder) {
  for (const int signal_number : {SIGTERM, SIGHUP}) {
    SCOPED_TRACE(strsignal(signal_number));
    ScratchDirectory dir("dp-signal");
    std::filesystem::create_directories(dir.file("tmp"));
    // The launcher keeps an ignored SIGHUP ignored (nohup's intent): a suite run under nohup
    // would otherwise wait on it for ever. It starts with the signal's default here.
    struct sigaction inherited {};
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(signal_number, &default_action, &inherited);
    ChildProcess launcher({GPUBENCH_BINARY, "--log-level", "warn", "train", "--model",
                           "test-tiny-cnn", "--gpus", "2", "--device", "cpu", "--batch-size", "1",
                           "--steps", "100000", "--threads", "1", "--output", dir.file("r.json")},
                          {{"TMPDIR", dir.file("tmp")}}, false);
    ::sigaction(signal_number, &inherited, nullptr);
    ASSERT_TRUE(testing::wait_for_children(launcher.pid(), 2)) << "the two ranks never started";
    ::kill(launcher.pid(), signal_number);
    const auto outcome = launcher.wait();
    EXPECT_EQ(outcome.signal, signal_number) << outcome.describe();
    EXPECT_EQ(processes_left(), std::vector<std::string>{});
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json"))) << "no half-made result";
    EXPECT_TRUE(std::filesystem::is_empty(dir.file("tmp"))) << "the ranks' folder is removed";
  }
}

TEST(DataParallelCli, AllreduceReportsBandwidthForTwoGlooRanks) {
  ScratchDirectory dir("dp-allreduce");
  const std::string path = dir.file("allreduce.json");
  const auto run = run_gpubench(
      "allreduce --device cpu --gpus 2 --min-bytes 1K --max-bytes 64K "
      "--iters 3 --warmup-iters 1 --output " +
      path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("busbw (GB/s)"), std::string::npos) << run.output;
  const auto report = read_json(path);
  EXPECT_EQ(report["schema"], "gpubench.allreduce/1");
  EXPECT_EQ(report["world_size"], 2);
  EXPECT_EQ(report["backend"], "gloo");
  const auto& rows = report["rows"];
  ASSERT_EQ(rows.size(), 7u);  // 1K, 2K, ... 64K
  EXPECT_EQ(rows[0]["bytes"], 1024);
  EXPECT_EQ(rows[0]["count"], 256);
  for (const auto& row : rows) {
    EXPECT_EQ(row["wrong"], 0);
    const double algbw = row["algbw_gbps"].get<double>();
    EXPECT_GT(algbw, 0.0);
    EXPECT_NEAR(algbw, row["bytes"].get<double>() / row["time_us"].get<double>() / 1e3,
                algbw * 1e-9);
    EXPECT_DOUBLE_EQ(row["busbw_gbps"].get<double>(), algbw);  // 2(n-1)/n = 1 for n = 2
  }
}

TEST(DataParallelCli, BadInputIsAUsageError) {
  ScratchDirectory dir("dp-bad");
  const std::string out = " --output " + dir.path();
  expect_refused("train --device cpu --gpus 2 --bucket-mb 0" + out,
                 "--bucket-mb must be an integer from 1 to 65536, got 0");
  expect_refused("train --device cpu --timeout 0" + out,
                 "--timeout must be an integer from 1 to 604800, got 0");
  expect_refused("allreduce --device cpu --max-bytes 12Q", "--max-bytes '12Q' is not a byte count");
  expect_refused("allreduce --device cpu --min-bytes 1M --max-bytes 1K",
                 "--max-bytes 1024 is below --min-bytes 1048576");
  expect_refused("allreduce --device cuda --gpus 2", "no CUDA device is available");
  expect_refused("train --device cpu --model test-tp-llama --gpus 2 --tensor-parallel 3" + out,
                 "--tensor-parallel 3 does not divide gpus 2");
  expect_refused("infer --device cpu --model resnet50 --gpus 2 --tensor-parallel 2" + out,
                 "--tensor-parallel 2: resnet50 does not shard");
  expect_refused("fit --device cpu --model test-tp-llama --gpus 4 --tensor-parallel 4 --mode graph",
                 "runs in eager mode");
  expect_refused("train --device cpu --tensor-parallel 0" + out,
                 "--tensor-parallel must be an integer from 1 to 4096, got 0");
  expect_refused("train --device cpu --model resnet50 --gpus 2 --shard full" + out,
                 "--shard full: resnet50 declares no repeated blocks to shard by");
  expect_refused("train --device cpu --model test-tp-llama --shard grads --tuning lora" + out,
                 "--shard grads with tuning lora: sharding is for full fine-tunes");
  expect_refused("train --device cpu --model test-tp-llama --shard full --mode graph" + out,
                 "--shard full runs in eager mode");
  expect_refused(
      "infer --device cpu --model test-tp-llama --prompt-len 8 --gen-len 4 --shard full" + out,
      "--shard full is a training setting, not infer's");
  expect_refused("train --device cpu --shard zero3" + out,
                 "--shard must be one of none, grads, full, got 'zero3'");
  const auto out_of_range = run_command("RANK=3 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 " +
                                        std::string(GPUBENCH_BINARY) + " train --device cpu" + out);
  EXPECT_EQ(out_of_range.exit_code, 2) << out_of_range.output;
  EXPECT_NE(out_of_range.output.find("rank 3 of 2"), std::string::npos) << out_of_range.output;
  const auto run_under_launcher = run_command(
      "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 " + std::string(GPUBENCH_BINARY) +
      " run " + GPUBENCH_SOURCE_DIR + "/configs/cpu-smoke.yaml" + out);
  EXPECT_EQ(run_under_launcher.exit_code, 2) << run_under_launcher.output;
  EXPECT_NE(run_under_launcher.output.find("launch `gpubench train`"), std::string::npos)
      << run_under_launcher.output;
}

}  // namespace
}  // namespace gpubench
