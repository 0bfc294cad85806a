// The sharded-data-parallel proof for the tests (tests/distributed/sharded_data_parallel_test.cpp):
// each rank builds the test Llama twice from one seed and trains both copies on its share of
// the same global batches through gpubench's TrainingStep, one under DDP's gradient averaging
// (GradientSynchronizer), the other sharded (ShardedDataParallel). It records both copies' losses
// at every step; after the first, each parameter's difference between DDP's and the sharded run's
// gathered master shards as a share of the bound the two runs' gradients allow (float_bounds.h:
// adamw_first_step_bound); after the last, how far training moved the weights; and what each copy
// holds (weights, gradients, optimiser
// states counted from the tensors, memory/training_memory.h).
// Writes what it found to <prefix>-rank<R>.json.
//   sharded_data_parallel_worker PREFIX full|grads fp32|bf16|fp16 CHECKPOINTING(0|1)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "distributed/collectives.h"
#include "distributed/gradient_synchronizer.h"
#include "distributed/launch_environment.h"
#include "features/parallelism/sharded_data_parallel.h"
#include "features/precision/precision_policy.h"
#include "float_bounds.h"
#include "memory/training_memory.h"
#include "modeling/model_registry.h"
#include "optim/optimizer_registry.h"
#include "testing/test_hooks.h"
#include "torch_support/device_timers.h"
#include "train/training_step.h"

namespace {

using torch::Tensor;

constexpr int64_t kSeqLen = 16;
constexpr int64_t kGlobalBatch = 4;
constexpr int kSteps = 3;

nlohmann::json counted(gpubench::TrainableModel& model, const gpubench::TrainingStep& step) {
  const gpubench::MemoryBreakdown memory =
      gpubench::counted_training_state(model.module(), step.optimizer());
  return {{"weights", memory.weights},
          {"gradients", memory.gradients},
          {"optimizer_states", memory.optimizer_states}};
}

// After the first step from the same weights: the largest share of its bound that any element's
// difference between DDP's weights and the gathered master shards takes.
double first_step_worst_share(gpubench::TrainableModel& replicated,
                              gpubench::ShardedDataParallel& sharding,
                              gpubench::TrainableModel& initial,
                              const torch::optim::AdamWOptions& adamw) {
  const auto gathered = sharding.gathered_parameters();
  const auto gathered_gradients = sharding.gathered_gradients();
  const auto start = initial.module().named_parameters();
  double worst = 0;
  for (const auto& item : replicated.module().named_parameters()) {
    const Tensor bound = gpubench::testing::adamw_first_step_bound(
        start[item.key()], item.value().grad(), gathered_gradients.at(item.key()), adamw);
    worst = std::max(worst, gpubench::testing::worst_share_of_bound(gathered.at(item.key()),
                                                                    item.value(), bound));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s PREFIX full|grads fp32|bf16|fp16 CHECKPOINTING\n", argv[0]);
    return 2;
  }
  const std::string prefix = argv[1];
  const gpubench::ShardMode mode = gpubench::shard_mode_from(argv[2]);
  const gpubench::Precision precision = gpubench::parse_precision(argv[3]);
  at::set_num_threads(1);
  gpubench::enable_test_hooks(true);  // the hidden test model
  const auto launch = gpubench::detect_launch_environment(gpubench::process_environment());
  if (!launch) return 2;
  auto world = gpubench::Collectives::connect(*launch, torch::kCPU, std::chrono::seconds(60));
  const gpubench::ModelInfo& info = gpubench::ModelRegistry::instance().get("test-tp-llama");
  gpubench::ModelOptions options;
  options.seq_len = kSeqLen;
  options.activation_checkpointing = std::atoi(argv[4]) != 0;
  torch::manual_seed(1);
  auto replicated = info.instantiate(options);
  torch::manual_seed(1);
  auto sharded = info.instantiate(options);
  torch::manual_seed(1);
  const auto initial = info.instantiate(options);

  const gpubench::PrecisionPolicy policy(precision, torch::kCPU);
  const auto settings = gpubench::optimizer_settings_for("adamw", kGlobalBatch);
  gpubench::GradientSynchronizer averaging(
      *world, gpubench::trainable_parameters(replicated->module()), 1 << 20);
  gpubench::ShardedDataParallel sharding(sharded->module(), *world, mode,
                                         policy.autocast_dtype().value_or(torch::kFloat));
  gpubench::TrainingStep replicated_step(*replicated, policy, settings, &averaging);
  gpubench::TrainingStep sharded_step(*sharded, policy, settings, &sharding);

  nlohmann::json found;
  found["rank"] = world->rank();
  found["ranks"] = world->world_size();
  found["units"] = sharding.units();
  found["learning_rate"] = settings.learning_rate;
  const int64_t share = kGlobalBatch / world->world_size(), first = world->rank() * share;
  torch::manual_seed(3);
  for (int step = 0; step < kSteps; ++step) {
    const Tensor sequence = torch::randint(info.capabilities.vocab, {kGlobalBatch, kSeqLen + 1});
    const gpubench::SyntheticBatch batch{sequence.narrow(0, first, share).narrow(1, 0, kSeqLen),
                                         sequence.narrow(0, first, share).narrow(1, 1, kSeqLen),
                                         {}};
    const double replicated_loss = replicated_step.run(batch).item<double>();
    const double sharded_loss = sharded_step.run(batch).item<double>();
    found["losses_replicated"].push_back(world->sum_over_ranks(replicated_loss) /
                                         world->world_size());
    found["losses_sharded"].push_back(world->sum_over_ranks(sharded_loss) / world->world_size());
    if (step == 0) {
      found["parameters_worst_share_of_bound"] = first_step_worst_share(
          *replicated, sharding, *initial, gpubench::testing::adamw_options_of(replicated_step));
    }
  }
  found["memory_replicated"] = counted(*replicated, replicated_step);
  found["memory_sharded"] = counted(*sharded, sharded_step);

  double largest_change = 0;
  const auto before = initial->module().named_parameters();
  for (const auto& item : replicated->module().named_parameters()) {
    largest_change =
        std::max(largest_change,
                 (item.value().detach() - before[item.key()].detach()).abs().max().item<double>());
  }
  found["parameters_largest_change"] = largest_change;
  found["gathered_bytes"] = sharding.gathered_bytes_per_step();
  found["gradient_bytes"] = sharding.gradient_bytes();
  std::ofstream(prefix + "-rank" + std::to_string(world->rank()) + ".json") << found.dump(2);
  world->shutdown();
  std::fflush(nullptr);
  std::_Exit(0);
}
