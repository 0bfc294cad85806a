// Sharded data parallelism proven against DDP (docs/parallelism.md): Gloo CPU ranks started by
// gpubench's own launcher run tests/workers/sharded_data_parallel_worker.cpp, which trains the
// test Llama (2 blocks, hidden 64) for three AdamW steps both ways on the same batches. The
// losses at every step and the gathered weights after the last agree with DDP's, and what a rank
// holds of the sharded parts (the weights, gradients and optimiser states counted from the
// tensors) is DDP's over the ranks.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "distributed/worker_ranks.h"
#include "features/parallelism/sharded_data_parallel.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::ScratchDirectory;

struct ShardLayout {
  int ranks;
  const char* mode;
  const char* precision;
  bool checkpointing;
};

std::string shard_layout_name(const ::testing::TestParamInfo<ShardLayout>& info) {
  std::string name = std::to_string(info.param.ranks) + "Ranks" + info.param.mode +
                     info.param.precision + (info.param.checkpointing ? "Checkpointed" : "");
  name[6] = static_cast<char>(std::toupper(name[6]));
  return name;
}

class ShardedDataParallelRanks : public ::testing::TestWithParam<ShardLayout> {
 protected:
  static std::vector<nlohmann::json> run(const ShardLayout& layout) {
    static const ScratchDirectory dir("sharded");
    const std::string prefix = dir.file(shard_layout_name({layout, 0}));
    return testing::run_worker_ranks({GPUBENCH_SHARDED_DATA_PARALLEL_WORKER, prefix, layout.mode,
                                      layout.precision, layout.checkpointing ? "1" : "0"},
                                     prefix, layout.ranks);
  }
};

TEST_P(ShardedDataParallelRanks, TrainsAsDdpDoesHoldingItsShare) {
  const ShardLayout layout = GetParam();
  const bool float32 = std::string(layout.precision) == "fp32";
  for (const nlohmann::json& rank : run(layout)) {
    SCOPED_TRACE("rank " + rank["rank"].dump());
    EXPECT_EQ(rank["units"].get<int>(), 3);  // the root and the 2 blocks
    const auto& replicated = rank["losses_replicated"];
    const auto& sharded = rank["losses_sharded"];
    ASSERT_EQ(replicated.size(), 3u);
    for (size_t step = 0; step < replicated.size(); ++step) {
      // float32: the same sums in another order. bf16/fp16: DDP runs autocast over float32
      // weights, the sharded run holds its gathered weights in the half type (FSDP2's
      // param_dtype), so each product rounds its weights once more.
      EXPECT_NEAR(sharded[step].get<double>(), replicated[step].get<double>(),
                  (float32 ? 1e-5 : 2e-2) * replicated[step].get<double>())
          << "step " << step;
    }
    // AdamW moves every weight by about the learning rate a step, whatever its gradient's size,
    // so a gradient near 0 whose last bits (or, in bf16, whose sign) the two runs' sums round
    // apart moves a weight another way: after the first step each weight is held to the bound
    // its two gradients allow (float_bounds.h: adamw_first_step_bound), and the later steps'
    // losses above show that the runs stay together.
    EXPECT_GT(rank["parameters_largest_change"].get<double>(), rank["learning_rate"].get<double>());
    EXPECT_LE(rank["parameters_worst_share_of_bound"].get<double>(), 1.0) << rank.dump();

    const int ranks = rank["ranks"].get<int>();
    const auto& ddp = rank["memory_replicated"];
    const auto& mine = rank["memory_sharded"];
    // Padding adds at most ranks - 1 elements a unit; AdamW's step counters are per tensor.
    const double slack = 4.0 * 3 * ranks + 64;
    EXPECT_NEAR(mine["gradients"].get<double>(), ddp["gradients"].get<double>() / ranks, slack);
    EXPECT_NEAR(mine["optimizer_states"].get<double>(),
                ddp["optimizer_states"].get<double>() / ranks,
                slack * 2 + 0.02 * ddp["optimizer_states"].get<double>() / ranks);
    // full: the master shards alone between steps; grads: the gathered weights too, in the
    // half type or in float32.
    const double whole = ddp["weights"].get<double>();
    const double gathered = std::string(layout.mode) == "full" ? 0 : float32 ? whole : whole / 2;
    EXPECT_NEAR(mine["weights"].get<double>(), whole / ranks + gathered, slack);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ShardedDataParallelRanks,
                         ::testing::Values(ShardLayout{2, "full", "fp32", false},
                                           ShardLayout{4, "full", "fp32", false},
                                           ShardLayout{2, "grads", "fp32", false},
                                           ShardLayout{2, "full", "bf16", true},
                                           ShardLayout{2, "grads", "bf16", false}),
                         shard_layout_name);

TEST(ShardUnits, EachBlockIsAUnitAndTheRestTheRoot) {
  EXPECT_EQ(shard_unit_of("model.layers.3.mlp.up_proj.weight"), "model.layers.3");
  EXPECT_EQ(shard_unit_of("layer1.0.conv1.weight"), "layer1.0");
  EXPECT_EQ(shard_unit_of("model.embed_tokens.weight"), "");
  EXPECT_EQ(shard_unit_of("lm_head.weight"), "");
  EXPECT_EQ(shard_unit_of("encoder.layer.11"), "encoder.layer.11");
}

}  // namespace
}  // namespace gpubench
