// A tiny data-parallel training run for the tests: a two-layer perceptron (no batch norm) on a
// fixed global batch, trained through gpubench's own TrainingStep, GradientSynchronizer and
// Collectives. Started by a launcher it trains on its rank's shard of the batch; alone, on all
// of it. Writes its final parameters, flattened, to <prefix>-rank<R>.pt.
//   data_parallel_worker PREFIX GLOBAL_BATCH STEPS BUCKET_BYTES
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <torch/torch.h>

#include "distributed/collectives.h"
#include "distributed/gradient_synchronizer.h"
#include "distributed/launch_environment.h"
#include "train/training_step.h"

namespace {

class TinyPerceptron : public gpubench::TrainableModel {
 public:
  TinyPerceptron() {
    torch::manual_seed(7);
    net_ = torch::nn::Sequential(torch::nn::Linear(8, 32), torch::nn::ReLU(),
                                 torch::nn::Linear(32, 16), torch::nn::ReLU(),
                                 torch::nn::Linear(16, 4));
  }
  torch::nn::Module& module() override { return *net_; }
  gpubench::SyntheticBatch synthetic_batch(int64_t, torch::Device, bool) override { return {}; }
  torch::Tensor training_loss(const gpubench::SyntheticBatch& batch) override {
    return torch::nn::functional::cross_entropy(net_->forward(batch.inputs), batch.targets);
  }
  int64_t count_forward() override { return 0; }

 private:
  torch::nn::Sequential net_{nullptr};
};

}  // namespace

// Non-ASCII bytes and lengths around the cut.
std::string gathered_text_of(int rank) {
  return "rank " + std::to_string(rank) + " \xc3\xa9 " +
         std::string(static_cast<size_t>(rank) * 8, 'x');
}

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s PREFIX GLOBAL_BATCH STEPS BUCKET_BYTES\n", argv[0]);
    return 2;
  }
  const std::string prefix = argv[1];
  const int64_t global_batch = std::atoll(argv[2]);
  const int steps = std::atoi(argv[3]);
  const int64_t bucket_bytes = std::atoll(argv[4]);
  at::set_num_threads(1);

  const auto launch = gpubench::detect_launch_environment(gpubench::process_environment());
  std::unique_ptr<gpubench::Collectives> collectives;
  if (launch) {
    collectives = gpubench::Collectives::connect(*launch, torch::kCPU, std::chrono::seconds(60));
  }
  const int rank = launch ? launch->rank : 0;
  const int world = launch ? launch->world_size : 1;

  TinyPerceptron model;
  std::unique_ptr<gpubench::GradientSynchronizer> synchronizer;
  if (collectives) {
    // Ranks start from different weights here, so the broadcast is what makes them agree.
    if (rank != 0) {
      torch::NoGradGuard no_grad;
      for (auto& p : model.module().parameters()) p.add_(0.5);
    }
    auto state = model.module().parameters();
    collectives->broadcast_from_rank0(state);
    synchronizer = std::make_unique<gpubench::GradientSynchronizer>(
        *collectives, model.module().parameters(), bucket_bytes);
  }
  const gpubench::PrecisionPolicy policy(gpubench::Precision::kFp32, torch::kCPU);
  gpubench::TrainingStep step(model, policy, gpubench::OptimizerSettings{}, synchronizer.get());

  torch::manual_seed(1234);
  for (int i = 0; i < steps; ++i) {
    const auto inputs = torch::randn({global_batch, 8});
    const auto targets = torch::randint(0, 4, {global_batch});
    const int64_t shard = global_batch / world;
    step.run({inputs.narrow(0, rank * shard, shard), targets.narrow(0, rank * shard, shard), {}});
  }
  std::vector<torch::Tensor> flat;
  for (const auto& p : model.module().parameters()) flat.push_back(p.detach().reshape(-1));
  torch::save(torch::cat(flat), prefix + "-rank" + std::to_string(rank) + ".pt");
  if (collectives) {  // what every rank gathered, cut at 24 bytes (how telemetry is gathered)
    std::ofstream gathered(prefix + "-rank" + std::to_string(rank) + "-gathered.txt");
    for (const std::string& text : collectives->gather_text(gathered_text_of(rank), 24)) {
      gathered << text << "\n";
    }
  }
  std::printf("rank %d of %d: %d steps, %d bucket(s)\n", rank, world, steps,
              synchronizer ? synchronizer->bucket_count() : 0);
  std::fflush(nullptr);
  std::_Exit(0);
}
