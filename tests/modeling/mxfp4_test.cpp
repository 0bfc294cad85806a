// MXFP4 (modeling/mxfp4_weights.h): the round trip within its bound, the byte layout the released
// checkpoints use, and the experts' products on the dequantised weights.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <cmath>

#include "modeling/mixture_of_experts.h"
#include "modeling/mxfp4_weights.h"

namespace gpubench {
namespace mxfp4_tests {
namespace {

TEST(Mxfp4, EveryWeightComesBackWithinHalfTheGapAroundItsScaledValue) {
  torch::manual_seed(3);
  const torch::Tensor weight = torch::randn({3, 40, 96}) * 0.02;
  weight[1][7][33] = 0.9;  // an outlier: its block's scale only
  const mxfp4::Mxfp4Weight held = mxfp4::quantize(weight);
  EXPECT_EQ(held.blocks.sizes(), (std::vector<int64_t>{3, 40, 3, 16}));
  EXPECT_EQ(held.scales.sizes(), (std::vector<int64_t>{3, 40, 3}));
  EXPECT_EQ(held.bytes(), 3 * 40 * 96 / 2 + 3 * 40 * 3);  // 4.25 bits a weight
  const torch::Tensor back = mxfp4::dequantize(held, torch::kFloat);
  const torch::Tensor scale =
      torch::exp2(held.scales.to(torch::kFloat) - 127).unsqueeze(-1).expand({3, 40, 3, 32});
  const torch::Tensor scaled = (weight.reshape({3, 40, 3, 32}) / scale).abs();
  EXPECT_LE(scaled.max().item<double>(), 6.0);  // no code saturates
  const torch::Tensor error = (back - weight).abs().reshape({3, 40, 3, 32}) / scale;
  const auto error_at = error.accessor<float, 4>();
  const auto scaled_at = scaled.accessor<float, 4>();
  int64_t outside = 0;
  for (int64_t e = 0; e < 3; ++e) {
    for (int64_t r = 0; r < 40; ++r) {
      for (int64_t g = 0; g < 3; ++g) {
        for (int64_t i = 0; i < 32; ++i) {
          outside += error_at[e][r][g][i] > mxfp4::largest_rounding_at(scaled_at[e][r][g][i]);
        }
      }
    }
  }
  EXPECT_EQ(outside, 0);
  // The largest magnitude of each block lands in the top binade: its scale is the smallest.
  EXPECT_GT(scaled.amax(-1).min().item<double>(), 3.0);
  // bf16 holds every dequantised value exactly.
  EXPECT_TRUE(torch::equal(mxfp4::dequantize(held, torch::kBFloat16).to(torch::kFloat), back));
}

// Every byte under every scale, the extremes included: bf16's product (bf16 multiplies there) is
// float32's cast, bit for bit, and fp16's is too (it multiplies in float32); each value is the
// code's value times 2^(scale - 127), the low nibble first (group 5's byte 6 is 0x56).
TEST(Mxfp4, EveryByteUnderEveryScaleDequantisesAsFloat32Does) {
  const torch::Tensor bytes = torch::arange(256, torch::kInt).to(torch::kUInt8);
  const torch::Tensor blocks =
      bytes.reshape({1, 16, 16}).repeat({255, 1, 1}).reshape({255, 16, 16});
  const torch::Tensor scales =
      torch::arange(255, torch::kInt).to(torch::kUInt8).unsqueeze(-1).repeat({1, 16});
  const mxfp4::Mxfp4Weight held{blocks.contiguous(), scales.contiguous()};
  const torch::Tensor exact = mxfp4::dequantize(held, torch::kFloat);
  EXPECT_TRUE(torch::equal(mxfp4::dequantize(held, torch::kBFloat16), exact.to(torch::kBFloat16)));
  EXPECT_TRUE(torch::equal(mxfp4::dequantize(held, torch::kHalf), exact.to(torch::kHalf)));
  const float* values = mxfp4::code_values();
  EXPECT_EQ(exact[130][5 * 32 + 12].item<float>(), values[0x56 & 15] * std::exp2f(130 - 127));
  EXPECT_EQ(exact[130][5 * 32 + 13].item<float>(), values[0x56 >> 4] * std::exp2f(130 - 127));
}

TEST(Mxfp4, CodesPackTwoAByteTheFirstInTheLowNibbleWithABiasedExponent) {
  // One block: the 16 values in code order, then the same negated, times 2^-3.
  const torch::Tensor codes = torch::from_blob(const_cast<float*>(mxfp4::code_values()), {16});
  const torch::Tensor weight = torch::cat({codes, -codes}).reshape({1, 32}) / 8;
  const mxfp4::Mxfp4Weight held = mxfp4::quantize(weight);
  EXPECT_EQ(held.scales.item<uint8_t>(), 127 - 3);
  EXPECT_EQ(held.blocks[0][0][0].item<uint8_t>(), 0x10);  // codes 0 and 1: 0 and 0.5
  EXPECT_EQ(held.blocks[0][0][3].item<uint8_t>(), 0x76);  // 4 and 6
  EXPECT_EQ(held.blocks[0][0][8].item<uint8_t>(), 0x98);  // -0 and -0.5
  EXPECT_TRUE(torch::equal(mxfp4::dequantize(held, torch::kFloat).abs(), weight.abs()));
  // Ties go to the even code: 0.25 to 0, 0.75 to 1, 2.5 to 2, 5 to 4 (scale 1 from the 6).
  const torch::Tensor ties = torch::zeros({1, 32});
  ties[0][0] = 6;
  ties[0][1] = 0.25;
  ties[0][2] = 0.75;
  ties[0][3] = 2.5;
  ties[0][4] = 5;
  const torch::Tensor rounded = mxfp4::dequantize(mxfp4::quantize(ties), torch::kFloat);
  EXPECT_EQ(rounded[0][1].item<float>(), 0.0f);
  EXPECT_EQ(rounded[0][2].item<float>(), 1.0f);
  EXPECT_EQ(rounded[0][3].item<float>(), 2.0f);
  EXPECT_EQ(rounded[0][4].item<float>(), 4.0f);
  EXPECT_FALSE(mxfp4::why_not(48).empty());
  EXPECT_TRUE(mxfp4::why_not(2880).empty());
}

moe::ExpertsOptions small_experts() {
  return {4, 32, 64, [](const torch::Tensor& x) {
            return torch::silu(x.narrow(-1, 0, 64)) * x.narrow(-1, 64, 64);
          }};
}

// The experts' sum against each token's chosen experts computed one by one, then the same with
// the weights in MXFP4 against their dequantised copies.
TEST(Experts, EachTokenGetsItsChosenExpertsWeightedSumInBothWeightFormats) {
  torch::manual_seed(4);
  moe::Experts experts(small_experts());
  for (auto& parameter : experts->parameters()) parameter.data().normal_(0, 0.1);
  const torch::Tensor tokens = torch::randn({6, 32});
  moe::Routes routes{torch::tensor({0, 2, 2, 3, 1, 0, 3, 2, 0, 1, 2, 1}).reshape({6, 2}),
                     torch::rand({6, 2})};
  const auto expected = [&](const torch::Tensor& gate_up, const torch::Tensor& down) {
    torch::Tensor out = torch::zeros({6, 32});
    for (int64_t t = 0; t < 6; ++t) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t e = routes.experts[t][j].item<int64_t>();
        const torch::Tensor mid = small_experts().activation(
            torch::linear(tokens[t], gate_up[e], experts->gate_up_proj_bias[e]));
        out[t] += routes.weights[t][j] * torch::linear(mid, down[e], experts->down_proj_bias[e]);
      }
    }
    return out;
  };
  torch::NoGradGuard no_grad;
  const torch::Tensor dense = expected(experts->gate_up_proj, experts->down_proj);
  EXPECT_TRUE(torch::allclose(experts(tokens, routes), dense, 1e-5, 1e-6));
  EXPECT_EQ(experts->load().tokens_per_expert(), (std::vector<int64_t>{3, 3, 4, 2}));

  const torch::Tensor gate_up =
      mxfp4::dequantize(mxfp4::quantize(experts->gate_up_proj), torch::kFloat);
  const torch::Tensor down = mxfp4::dequantize(mxfp4::quantize(experts->down_proj), torch::kFloat);
  experts->quantize_mxfp4();
  EXPECT_EQ(experts->gate_up_proj.numel(), 0);  // the float weights are freed
  EXPECT_TRUE(torch::allclose(experts(tokens, routes), expected(gate_up, down), 1e-5, 1e-6));
  EXPECT_EQ(experts->load().tokens_per_expert(), (std::vector<int64_t>{6, 6, 8, 4}));
}

}  // namespace
}  // namespace mxfp4_tests
}  // namespace gpubench
