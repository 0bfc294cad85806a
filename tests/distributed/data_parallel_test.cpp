// Data parallelism through gpubench's own launcher, c10d Gloo and the gradient synchronizer, on
// a tiny perceptron (tests/workers/data_parallel_worker.cpp): ranks end with identical
// parameters, and N ranks with batch b match one process with batch N x b.
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "launcher/child_process.h"
#include "launcher/rank_launcher.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::ScratchDirectory;

constexpr int kGlobalBatch = 16;
constexpr int kSteps = 6;
constexpr int kBucketBytes = 512;  // several buckets even for this tiny model

// Runs the worker as `ranks` ranks (1: alone, without a process group) for `steps` into `dir`
// and returns every rank's final parameters.
std::vector<torch::Tensor> train(const ScratchDirectory& dir, int ranks, int steps) {
  const std::string prefix =
      dir.file("params-" + std::to_string(ranks) + "-" + std::to_string(steps));
  const std::vector<std::string> argv{GPUBENCH_DATA_PARALLEL_WORKER, prefix,
                                      std::to_string(kGlobalBatch), std::to_string(steps),
                                      std::to_string(kBucketBytes)};
  if (ranks == 1) {
    EXPECT_TRUE(ChildProcess(argv, {}, false).wait().succeeded());
  } else {
    const auto failure = launch_local_ranks(argv, ranks, std::chrono::seconds(60));
    EXPECT_FALSE(failure) << "rank " << failure->rank << " " << failure->outcome.describe();
  }
  std::vector<torch::Tensor> parameters;
  for (int rank = 0; rank < ranks; ++rank) {
    torch::Tensor flat;
    torch::load(flat, prefix + "-rank" + std::to_string(rank) + ".pt");
    parameters.push_back(flat);
  }
  return parameters;
}

// Each (ranks, steps) trained once in this process, in one scratch folder, for every test below
// that reads it: the parameters, and the texts the ranks gathered beside them.
class DataParallel : public ::testing::TestWithParam<int> {
 protected:
  static const std::vector<torch::Tensor>& trained(int ranks, int steps = kSteps) {
    static std::map<std::pair<int, int>, std::vector<torch::Tensor>> runs;
    const auto key = std::make_pair(ranks, steps);
    if (runs.count(key) == 0) runs[key] = train(scratch(), ranks, steps);
    return runs[key];
  }
  static std::string gathered_file(int ranks, int rank) {
    return scratch().file("params-" + std::to_string(ranks) + "-" + std::to_string(kSteps) +
                          "-rank" + std::to_string(rank) + "-gathered.txt");
  }

 private:
  static const ScratchDirectory& scratch() {
    static const ScratchDirectory dir("dp");
    return dir;
  }
};

TEST_P(DataParallel, RanksHoldIdenticalParametersAfterTraining) {
  const auto& parameters = trained(GetParam());
  ASSERT_EQ(parameters.size(), static_cast<size_t>(GetParam()));
  // The ranks started from different weights and saw different data.
  for (size_t rank = 1; rank < parameters.size(); ++rank) {
    EXPECT_TRUE(torch::equal(parameters[0], parameters[rank])) << "rank " << rank;
  }
}

// Every rank gets every rank's text, in rank order, each cut at the limit (the worker writes
// what it gathered; its texts are "rank R é " and R x 8 'x').
TEST_P(DataParallel, EveryRankGathersEveryRanksText) {
  trained(GetParam());
  std::string expected;
  for (int rank = 0; rank < GetParam(); ++rank) {
    const std::string text = "rank " + std::to_string(rank) + " \xc3\xa9 " +
                             std::string(static_cast<size_t>(rank) * 8, 'x');
    expected += text.substr(0, 24) + "\n";
  }
  for (int rank = 0; rank < GetParam(); ++rank) {
    std::ifstream in(gathered_file(GetParam(), rank));
    const std::string gathered((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    EXPECT_EQ(gathered, expected) << "rank " << rank;
  }
}

TEST_P(DataParallel, MatchesOneProcessWithTheWholeBatch) {
  const torch::Tensor untrained = trained(1, 0).front();
  const torch::Tensor alone = trained(1).front();
  const torch::Tensor together = trained(GetParam()).front();
  ASSERT_FALSE(torch::allclose(alone, untrained, 1e-3, 1e-3)) << "training changed nothing";
  const double difference = (alone - together).abs().max().item<double>();
  EXPECT_LT(difference, 1e-5) << "float reordering is all that may differ";
}

INSTANTIATE_TEST_SUITE_P(Ranks, DataParallel, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "Ranks"; });

}  // namespace
}  // namespace gpubench
