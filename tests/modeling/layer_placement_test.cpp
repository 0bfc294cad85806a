// Layer placement (modeling/layer_placement.h) over tensor parallelism's group
// (features/parallelism/tensor_parallel.h): each projection's split follows its role, and
// the communication around the layers is what Megatron's is: one input copy for the layers that
// read one input, one sum per row-parallel output, none at all outside autograd's record.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <vector>

#include "features/parallelism/layer_collectives.h"
#include "features/parallelism/tensor_parallel.h"
#include "modeling/layer_placement.h"

namespace gpubench {
namespace layer_placement_tests {
namespace {

using torch::Tensor;

// Rank 0 of 2 ranks holding the same values: a sum doubles a tensor. Counts its all-reduces.
class TwoEqualRanks : public LayerCollectives {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allreduce_sum(Tensor& tensor) override {
    ++sums;
    tensor.mul_(2);
  }
  void allreduce_max(Tensor&) override {}
  Tensor allgather_last_dim(const Tensor& tensor) override {
    return torch::cat({tensor, tensor}, -1);
  }
  Tensor all_to_all(const Tensor& rows, const std::vector<int64_t>&,
                    const std::vector<int64_t>&) override {
    return rows;
  }
  int sums = 0;
};

TEST(LayerPlacement, EachRoleHoldsItsSideOfTheWeight) {
  TwoEqualRanks ranks;
  parallelism::TensorParallelLayers group(ranks);
  const layers::LayerPlacement placement{&group, nullptr};
  for (const char* role : {"q", "k", "v", "gate", "up", layers::kVocabularyHeadRole}) {
    EXPECT_EQ(layers::projection(8, 6, false, role, placement)->weight.sizes(),
              (std::vector<int64_t>{3, 8}))
        << role;
  }
  for (const char* role : {"o", "down"}) {
    EXPECT_EQ(layers::projection(8, 6, true, role, placement)->weight.sizes(),
              (std::vector<int64_t>{6, 4}))
        << role;
  }
  EXPECT_EQ(layers::projection(8, 6, false, "q", {})->weight.sizes(), (std::vector<int64_t>{6, 8}));
  EXPECT_THROW(layers::projection(8, 6, false, "query", placement), std::logic_error);
  EXPECT_EQ(placement.share_of(8, "the heads"), 4);
  EXPECT_THROW(placement.share_of(7, "the heads"), std::logic_error);
  EXPECT_EQ(layers::TokenEmbedding(10, 4, placement)->weight.sizes(), (std::vector<int64_t>{5, 4}));
}

// q, k and v read one input and share its copy: backward all-reduces their summed gradient once,
// and the input's gradient is that sum over the (two equal) ranks. The row-parallel output is
// summed once in forward, its bias added after the sum.
TEST(LayerPlacement, LayersReadingOneInputShareOneCopyAndTheRowOutputIsSummedOnce) {
  torch::manual_seed(2);
  TwoEqualRanks ranks;
  parallelism::TensorParallelLayers group(ranks);
  const layers::LayerPlacement placement{&group, nullptr};
  std::vector<layers::AdaptedLinear> reading;
  for (const char* role : {"q", "k", "v"}) {
    reading.push_back(layers::projection(4, 4, false, role, placement));
    reading.back()->weight.data().normal_();
  }
  layers::AdaptedLinear output = layers::projection(4, 4, true, "o", placement);
  output->weight.data().normal_();
  output->bias.data().fill_(0.5);

  const Tensor x = torch::randn({3, 4}, torch::requires_grad());
  const Tensor input = x * 1;  // not a leaf, as a norm's output
  Tensor sum = torch::zeros({3, 2});
  for (layers::AdaptedLinear& layer : reading) sum = sum + layer(input);
  const Tensor y = output(torch::cat({sum, sum}, -1).narrow(-1, 0, 2));
  EXPECT_EQ(ranks.sums, 1);  // the row-parallel output's
  EXPECT_TRUE(
      torch::allclose(y, 2 * torch::nn::functional::linear(sum, output->weight) + 0.5, 1e-6, 1e-6));

  y.sum().backward();
  EXPECT_EQ(ranks.sums, 2);  // and the one copy's
  // The input's gradient without the copy: each layer's, summed; then doubled by the sum.
  const Tensor upstream = torch::ones({3, 4}).mm(output->weight).narrow(-1, 0, 2);
  Tensor expected = torch::zeros({3, 4});
  for (layers::AdaptedLinear& layer : reading) expected = expected + upstream.mm(layer->weight);
  EXPECT_TRUE(torch::allclose(x.grad(), 2 * expected, 1e-5, 1e-5));
}

TEST(LayerPlacement, OutsideAutogradNoCopyCommunicates) {
  TwoEqualRanks ranks;
  parallelism::TensorParallelLayers group(ranks);
  const layers::LayerPlacement placement{&group, nullptr};
  layers::AdaptedLinear q = layers::projection(4, 4, false, "q", placement);
  torch::NoGradGuard no_grad;
  q(torch::randn({2, 4}));
  EXPECT_EQ(ranks.sums, 0);
}

}  // namespace
}  // namespace layer_placement_tests
}  // namespace gpubench
