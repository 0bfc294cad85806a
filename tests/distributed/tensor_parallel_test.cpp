// Tensor and expert parallelism proven against one rank (docs/parallelism.md): Gloo CPU ranks
// started by gpubench's own launcher run tests/workers/tensor_parallel_worker.cpp, which shards
// the test Llama (8 query heads, 4 key/value heads) over 2 or 4 ranks, and with 4 ranks also as
// 2 replicas of 2; and the tiny gpt-oss (4 heads, 2 key/value heads, 8 experts of width 64)
// over 2 tensor-parallel ranks, and its experts over 2 ranks, and over 2 of 4 ranks (two
// replicas of each expert). Each rank compares its sharded model with the whole one on the same
// input: logits, greedy tokens, one AdamW step's loss and updated parameters.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "distributed/worker_ranks.h"
#include "test_helpers.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

using testing::ScratchDirectory;

struct Layout {
  int ranks;
  const char* model;
  const char* kind;  // "tensor" or "expert" parallelism
  int size;          // its group's ranks
  const char* tuning;
  bool tensor() const { return kind[0] == 't'; }
  bool llama() const { return std::string(model).find("llama") != std::string::npos; }
};

std::string layout_name(const ::testing::TestParamInfo<Layout>& info) {
  const Layout& layout = info.param;
  return std::string(layout.llama() ? "" : "GptOss") + std::to_string(layout.ranks) + "Ranks" +
         (layout.tensor() ? "Tp" : "Ep") + std::to_string(layout.size) +
         (layout.tuning[0] == 'l' ? "Lora" : "Full");
}

class TensorParallel : public ::testing::TestWithParam<Layout> {
 protected:
  // Every rank's findings.
  static std::vector<nlohmann::json> run(const Layout& layout) {
    static const ScratchDirectory dir("tp");
    const std::string prefix =
        dir.file(std::string(layout.model) + "-" + std::to_string(layout.ranks) + "-" +
                 layout.kind + std::to_string(layout.size) + "-" + layout.tuning);
    return testing::run_worker_ranks({GPUBENCH_TENSOR_PARALLEL_WORKER, prefix, layout.model,
                                      layout.kind, std::to_string(layout.size), layout.tuning},
                                     prefix, layout.ranks);
  }
};

// Float32 sums in another order: the logits agree to 1e-5 of their largest, the gradients to
// 1e-4 of theirs (about 80 and 800 float32 ulps; a reordered sum of n terms typically moves by
// sqrt(n) ulps of its terms' size, and these reductions are of at most a few thousand terms). One
// AdamW step moves each weight by about the learning rate whatever its gradient's size, so the
// stepped weights are held to the bound each element's two gradients allow
// (float_bounds.h: adamw_first_step_bound), not to a share of the rate that one CPU's order met.
// bf16 keeps 8 bits of mantissa: a row-parallel output rounded once per rank and again after the
// sum is off by a few of its ulps (2^-8 each) after 2 blocks.
constexpr double kInt4Tolerance = 0.03;

TEST_P(TensorParallel, ShardedModelComputesWhatOneRankComputes) {
  const Layout layout = GetParam();
  for (const nlohmann::json& rank : run(layout)) {
    SCOPED_TRACE("rank " + rank["rank"].dump());
    EXPECT_TRUE(rank["logits_shape_equal"].get<bool>());
    EXPECT_GT(rank["logits_largest"].get<double>(), 0.01);
    EXPECT_LT(rank["logits_max_abs_diff"].get<double>(),
              1e-5 * rank["logits_largest"].get<double>());
    EXPECT_EQ(rank["token_mismatches"].get<int64_t>(), 0) << "of " << rank["tokens"];
    EXPECT_NEAR(rank["loss_sharded"].get<double>(), rank["loss_whole"].get<double>(), 1e-5);
    EXPECT_GT(rank["gradients_largest"].get<double>(), 1e-4);
    EXPECT_LT(rank["gradients_max_abs_diff"].get<double>(),
              1e-4 * rank["gradients_largest"].get<double>());
    EXPECT_LE(rank["parameters_worst_share_of_bound"].get<double>(), 1.0);
    EXPECT_GT(rank["collectives"].get<int64_t>(), 0);
    // The Llama on LibTorch 2.6 and later; over 4 ranks a key/value slice has 8 rows, under the
    // CPU kernel's 16. gpt-oss holds no int4 weights.
    EXPECT_EQ(rank.contains("int4_logits_largest"),
              compat::kHasIntWeights && layout.tensor() && layout.size == 2 && layout.llama());
    EXPECT_EQ(rank.contains("mxfp4_logits_largest"), !layout.llama());
    if (rank.contains("mxfp4_logits_largest")) {
      EXPECT_LT(rank["mxfp4_logits_max_abs_diff"].get<double>(),
                1e-5 * rank["mxfp4_logits_largest"].get<double>());
    }
    if (rank.contains("int4_logits_largest")) {
      EXPECT_LT(rank["int4_logits_max_abs_diff"].get<double>(),
                kInt4Tolerance * rank["int4_logits_largest"].get<double>());
    }
  }
}

constexpr const char* kLlama = "test-tp-llama";
constexpr const char* kGptOss = "test-tiny-gpt-oss";
INSTANTIATE_TEST_SUITE_P(Layouts, TensorParallel,
                         ::testing::Values(Layout{2, kLlama, "tensor", 2, "full"},
                                           Layout{4, kLlama, "tensor", 4, "full"},
                                           Layout{2, kLlama, "tensor", 2, "lora"},
                                           Layout{4, kLlama, "tensor", 2, "lora"},
                                           Layout{2, kGptOss, "tensor", 2, "full"},
                                           Layout{4, kGptOss, "expert", 2, "full"},
                                           Layout{2, kGptOss, "expert", 2, "lora"}),
                         layout_name);

}  // namespace
}  // namespace gpubench
