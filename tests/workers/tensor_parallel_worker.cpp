// The tensor-parallel proof for the tests (tests/distributed/tensor_parallel_test.cpp): each
// rank builds the whole test Llama (test-tp-llama) and, from its weights, its sharded copy
// (tensor_parallel::copy_shard), then compares them on the same input:
//   the logits of a forward pass, gathered over the tensor-parallel group;
//   the tokens of a greedy generation with the key/value cache;
//   one AdamW training step through gpubench's TrainingStep, the whole model on the global batch,
//   the sharded one on its replica's share of it (gradients averaged over the data-parallel
//   group, LoRA's partial gradients summed over the tensor-parallel one): the loss, every
//   gradient and every updated parameter against the slice of the whole model's.
// Writes what it found to <prefix>-rank<R>.json.
//   tensor_parallel_worker PREFIX TENSOR_PARALLEL full|lora
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "distributed/collectives.h"
#include "distributed/gradient_synchronizer.h"
#include "distributed/launch_environment.h"
#include "distributed/tensor_parallel_collectives.h"
#include "infer/greedy_generation.h"
#include "modeling/model_registry.h"
#include "optim/optimizer_registry.h"
#include "run/precision_policy.h"
#include "testing/test_hooks.h"
#include "torch_support/device_timers.h"
#include "train/training_step.h"

namespace {

using gpubench::TrainableModel;
using torch::Tensor;

constexpr int64_t kSeqLen = 16;
constexpr int64_t kGlobalBatch = 4;
constexpr int64_t kPromptLen = 12;
constexpr int64_t kGenLen = 6;

gpubench::ModelOptions options_for(const std::string& tuning) {
  gpubench::ModelOptions options;
  options.seq_len = kSeqLen;
  if (tuning == "lora") {
    options.tuning = gpubench::Tuning::kLora;
    options.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
    options.lora.rank = 4;
    options.lora.alpha = 8;
  }
  return options;
}

std::map<std::string, Tensor> parameters_of(TrainableModel& model) {
  std::map<std::string, Tensor> by_name;
  for (const auto& item : model.module().named_parameters()) by_name[item.key()] = item.value();
  return by_name;
}

// The largest |a - b| over `sharded`'s parameters (or their gradients, with `of` the gradient)
// against their slices of `whole`'s, and the largest |a| of `whole`'s.
struct Difference {
  double largest_difference = 0;
  double largest = 0;
};
template <typename Of>
Difference largest_difference(TrainableModel& whole, TrainableModel& sharded, int rank, int size,
                              Of of) {
  const auto full = parameters_of(whole);
  Difference found;
  for (const auto& [name, local] : parameters_of(sharded)) {
    if (!of(local).defined()) continue;
    const Tensor mine = of(local), theirs = of(full.at(name));
    Tensor slice = torch::empty_like(mine);
    gpubench::tensor_parallel::copy_shard(theirs, slice, rank, size);
    found.largest_difference =
        std::max(found.largest_difference, (slice - mine).abs().max().item<double>());
    found.largest = std::max(found.largest, theirs.abs().max().item<double>());
  }
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PREFIX TENSOR_PARALLEL full|lora\n", argv[0]);
    return 2;
  }
  const std::string prefix = argv[1];
  const int tensor_parallel = std::atoi(argv[2]);
  const std::string tuning = argv[3];
  at::set_num_threads(1);
  gpubench::enable_test_hooks(true);  // the hidden test model
  const auto launch = gpubench::detect_launch_environment(gpubench::process_environment());
  if (!launch) return 2;
  auto world = gpubench::Collectives::connect(*launch, torch::kCPU, std::chrono::seconds(60));
  gpubench::ParallelGroups groups = gpubench::split_world(*world, tensor_parallel);
  gpubench::TensorParallelCollectives& group = *groups.tensor_parallel;
  const int replicas = groups.data_parallel->world_size(), replica = groups.data_parallel->rank();

  const gpubench::ModelInfo& info = gpubench::ModelRegistry::instance().get("test-tp-llama");
  gpubench::ModelOptions options = options_for(tuning);
  torch::manual_seed(1);
  const auto whole = info.instantiate(options);
  {  // adapters that change the output from the start
    torch::NoGradGuard no_grad;
    for (auto& [name, parameter] : parameters_of(*whole)) {
      if (name.find("lora_B") != std::string::npos) parameter.normal_(0, 0.02);
    }
  }
  options.tensor_parallel = &group;
  const auto sharded = info.instantiate(options);
  const auto full = parameters_of(*whole);
  for (auto& [name, local] : parameters_of(*sharded)) {
    gpubench::tensor_parallel::copy_shard(full.at(name), local, group.rank(), group.size());
  }
  nlohmann::json found;
  found["rank"] = world->rank();

  torch::manual_seed(2);
  const Tensor prompt = torch::randint(info.capabilities.vocab, {2, kPromptLen}, torch::kLong);
  {
    torch::NoGradGuard no_grad;
    whole->module().eval();
    sharded->module().eval();
    const Tensor expected = whole->inference_output({prompt, {}, {}});
    const Tensor logits = sharded->inference_output({prompt, {}, {}});
    found["logits_shape_equal"] = expected.sizes() == logits.sizes();
    found["logits_largest"] = expected.abs().max().item<double>();
    found["logits_max_abs_diff"] = (expected - logits).abs().max().item<double>();
    auto generate = [&](TrainableModel& model) {
      gpubench::TextGenerator& generator = *model.text_generator();
      gpubench::KvCache cache =
          generator.allocate_cache(2, kPromptLen + kGenLen, torch::kCPU, torch::kFloat);
      return gpubench::generate_greedy(generator, cache, prompt, kGenLen, torch::kCPU).tokens;
    };
    const Tensor tokens = generate(*whole);
    found["tokens"] = tokens.numel();
    found["token_mismatches"] = (tokens != generate(*sharded)).sum().item<int64_t>();
    whole->module().train();
    sharded->module().train();
  }

  torch::manual_seed(3);
  const Tensor sequence = torch::randint(info.capabilities.vocab, {kGlobalBatch, kSeqLen + 1});
  const gpubench::SyntheticBatch batch{
      sequence.narrow(1, 0, kSeqLen).contiguous(), sequence.narrow(1, 1, kSeqLen).contiguous(), {}};
  const int64_t share = kGlobalBatch / replicas;
  const gpubench::SyntheticBatch replica_batch{batch.inputs.narrow(0, replica * share, share),
                                               batch.targets.narrow(0, replica * share, share),
                                               {}};
  const gpubench::PrecisionPolicy policy(gpubench::Precision::kFp32, torch::kCPU);
  const auto settings = gpubench::optimizer_settings_for("adamw", kGlobalBatch);
  std::unique_ptr<gpubench::GradientSynchronizer> synchronizer;
  if (replicas > 1) {
    synchronizer = std::make_unique<gpubench::GradientSynchronizer>(
        *groups.data_parallel, gpubench::trainable_parameters(sharded->module()), 1 << 20);
  }
  gpubench::TrainingStep whole_step(*whole, policy, settings, nullptr);
  gpubench::TrainingStep sharded_step(*sharded, policy, settings, synchronizer.get());
  found["loss_whole"] = whole_step.run(batch).item<double>();
  found["loss_sharded"] =
      groups.data_parallel->sum_over_ranks(sharded_step.run(replica_batch).item<double>()) /
      replicas;
  found["learning_rate"] = settings.learning_rate;
  const Difference parameters = largest_difference(*whole, *sharded, group.rank(), group.size(),
                                                   [](const Tensor& p) { return p.detach(); });
  found["parameters_max_abs_diff"] = parameters.largest_difference;
  // AdamW's first step moves a weight by about the learning rate whatever its gradient's size:
  // the gradients themselves show a sum counted twice or missed.
  const Difference gradients = largest_difference(*whole, *sharded, group.rank(), group.size(),
                                                  [](const Tensor& p) { return p.grad(); });
  found["gradients_max_abs_diff"] = gradients.largest_difference;
  found["gradients_largest"] = gradients.largest;
  gpubench::synchronize_device(torch::kCPU);
  found["collectives"] = group.take_waited().collectives;

  std::ofstream(prefix + "-rank" + std::to_string(world->rank()) + ".json") << found.dump(2);
  std::fflush(nullptr);
  std::_Exit(0);
}
