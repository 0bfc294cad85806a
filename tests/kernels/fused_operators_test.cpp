// gpubench's own operators (kernels/fused_operators.h): on the CPU each is the composition it
// replaces, bit for bit, written out here as Hugging Face writes it; a profile sees it as one
// operator (one launch where the build has its CUDA kernel); under autograd the composition
// runs, with its backward. The CUDA kernels against the compositions on real shapes run on a GPU
// only (the GPU check's `kernels` tier).
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/fused_operators.h"
#include "recorded_operators.h"

namespace gpubench {
namespace {

using kernels::RmsWeight;

const std::vector<torch::ScalarType>& floating_dtypes() {
  static const std::vector<torch::ScalarType> dtypes = {torch::kBFloat16, torch::kHalf,
                                                        torch::kFloat};
  return dtypes;
}

// LlamaRMSNorm (weight after the rounding) and Olmo2RMSNorm (before it), as transformers writes
// them; the weight in x's dtype, or float32.
torch::Tensor hugging_face_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                                    RmsWeight order) {
  const torch::Tensor x32 = x.to(torch::kFloat);
  const torch::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, true) + eps);
  if (order == RmsWeight::kAfterRounding) return weight * normed.to(x.scalar_type());
  return (weight * normed).to(x.scalar_type());
}

// LibTorch 1.13's CPU has no fp16 SiLU (2.11's has).
bool cpu_has_half_silu() {
  try {
    torch::silu(torch::zeros({1}, torch::kHalf));
    return true;
  } catch (const c10::Error&) {
    return false;
  }
}

TEST(FusedOperators, EachCpuFormIsHuggingFacesArithmeticBitForBit) {
  torch::manual_seed(0);
  const double eps = 1e-5;
  const c10::InferenceMode inference_mode;
  for (const auto dtype : floating_dtypes()) {
    for (const int64_t width : {64, 2880, 4096}) {
      const torch::Tensor x = (3 * torch::randn({2, 5, width})).to(dtype);
      const torch::Tensor addend = torch::randn({2, 5, width}).to(dtype);
      const torch::Tensor weight = (1 + 0.1 * torch::randn({width})).to(dtype);
      for (const auto order : {RmsWeight::kAfterRounding, RmsWeight::kBeforeRounding}) {
        const std::string where = std::string(c10::toString(dtype)) + ", width " +
                                  std::to_string(width) +
                                  (order == RmsWeight::kAfterRounding ? ", after" : ", before");
        EXPECT_TRUE(torch::equal(kernels::rms_norm(x, weight, eps, order),
                                 hugging_face_rms_norm(x, weight, eps, order)))
            << where;
        const auto [sum, normed] = kernels::add_rms_norm(x, addend, weight, eps, order);
        const torch::Tensor hf_sum = x + addend;
        EXPECT_TRUE(torch::equal(sum, hf_sum)) << where;
        EXPECT_TRUE(torch::equal(normed, hugging_face_rms_norm(hf_sum, weight, eps, order)))
            << where;
      }
      // gpt-oss keeps its norms' weights in float32 where the model runs in bf16.
      const torch::Tensor weight32 = weight.to(torch::kFloat);
      EXPECT_TRUE(torch::equal(kernels::rms_norm(x, weight32, eps, RmsWeight::kBeforeRounding),
                               hugging_face_rms_norm(x, weight32, eps, RmsWeight::kBeforeRounding)))
          << c10::toString(dtype);
      if (dtype == torch::kHalf && !cpu_has_half_silu()) continue;
      const torch::Tensor gate = (4 * torch::randn({3, width})).to(dtype);
      const torch::Tensor up = torch::randn({3, width}).to(dtype);
      EXPECT_TRUE(torch::equal(kernels::silu_mul(gate, up), torch::nn::functional::silu(gate) * up))
          << c10::toString(dtype);
    }
  }
}

// A profile names each operator once; CUDA launches it as one kernel where the build compiled
// them (testing::operators_of_one_cuda_kernel), its CPU composition's operators otherwise.
TEST(FusedOperators, AProfileSeesEachAsOneOperator) {
  const c10::InferenceMode inference_mode;
  const torch::Tensor x = torch::randn({4, 64}), weight = torch::ones({64});
  const testing::RecordedOperators recorded = testing::record_operators([&] {
    kernels::rms_norm(x, weight, 1e-6, RmsWeight::kAfterRounding);
    kernels::add_rms_norm(x, x, weight, 1e-6, RmsWeight::kAfterRounding);
    kernels::silu_mul(x, x);
  });
  for (const std::string& name : kernels::operator_names()) {
    EXPECT_EQ(recorded.called.count(name), 1u) << name;
    const auto launches = std::count(recorded.launches.begin(), recorded.launches.end(), name);
    EXPECT_EQ(launches, kernels::has_cuda_kernels() ? 1 : 0) << name;
  }
  if (kernels::has_cuda_kernels()) {
    EXPECT_EQ(recorded.launches.size(), 3u);
  }
}

// Where autograd records, the composition runs (the kernels have no backward): the gradients
// are the composition's.
TEST(FusedOperators, UnderAutogradTheCompositionRunsWithItsBackward) {
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({3, 32}, torch::requires_grad());
  const torch::Tensor weight = torch::randn({32}, torch::requires_grad());
  const testing::RecordedOperators recorded = testing::record_operators([&] {
    const auto [sum, normed] = kernels::add_rms_norm(x, x, weight, 1e-6, RmsWeight::kAfterRounding);
    (kernels::silu_mul(normed, sum).sum() +
     kernels::rms_norm(x, weight, 1e-6, RmsWeight::kBeforeRounding).sum())
        .backward();
  });
  for (const std::string& name : kernels::operator_names()) {
    EXPECT_EQ(recorded.called.count(name), 0u) << name;
  }
  const torch::Tensor x_ref = x.detach().clone().requires_grad_();
  const torch::Tensor w_ref = weight.detach().clone().requires_grad_();
  const torch::Tensor sum_ref = x_ref + x_ref;
  const torch::Tensor normed_ref =
      hugging_face_rms_norm(sum_ref, w_ref, 1e-6, RmsWeight::kAfterRounding);
  (torch::nn::functional::silu(normed_ref) * sum_ref)
      .sum()
      .add(hugging_face_rms_norm(x_ref, w_ref, 1e-6, RmsWeight::kBeforeRounding).sum())
      .backward();
  EXPECT_TRUE(torch::allclose(x.grad(), x_ref.grad(), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(weight.grad(), w_ref.grad(), 1e-5, 1e-6));
}

// The CUDA kernels against their compositions on the device, at Llama 3.1 8B's and 70B's widths
// (the norms: 4096 and 8192; SiLU x mul: 14336 and 28672) and at a prefill's rows. RMSNorm sums
// its squares in another order than ATen's kernel, so its values may differ by a unit in the
// last place of the dtype; SiLU x mul computes the same float32 expression, rounded where the
// composition rounds.
TEST(FusedOperators, CudaKernelsComputeTheirCompositions) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device (the GPU check runs it)";
  if (!kernels::has_cuda_kernels()) GTEST_SKIP() << "this build compiled no CUDA kernels";
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  const auto on_cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const auto dtype : floating_dtypes()) {
    const double tolerance = dtype == torch::kFloat ? 1e-5 : dtype == torch::kHalf ? 1e-3 : 8e-3;
    for (const int64_t rows : {1, 512}) {
      for (const int64_t width : {4096, 8192}) {
        const torch::Tensor x = (3 * torch::randn({rows, width}, on_cuda)).to(dtype);
        const torch::Tensor addend = torch::randn({rows, width}, on_cuda).to(dtype);
        const torch::Tensor weight = (1 + 0.1 * torch::randn({width}, on_cuda)).to(dtype);
        for (const auto order : {RmsWeight::kAfterRounding, RmsWeight::kBeforeRounding}) {
          const std::string where = std::string(c10::toString(dtype)) + " " + std::to_string(rows) +
                                    "x" + std::to_string(width);
          const torch::Tensor reference = hugging_face_rms_norm(x, weight, 1e-5, order);
          EXPECT_TRUE(torch::allclose(kernels::rms_norm(x, weight, 1e-5, order), reference,
                                      tolerance, tolerance))
              << where;
          const auto [sum, normed] = kernels::add_rms_norm(x, addend, weight, 1e-5, order);
          EXPECT_TRUE(torch::equal(sum, x + addend)) << where;
          EXPECT_TRUE(torch::allclose(
              normed, hugging_face_rms_norm(x + addend, weight, 1e-5, order), tolerance, tolerance))
              << where;
        }
      }
      for (const int64_t width : {14336, 28672}) {
        const torch::Tensor gate = (4 * torch::randn({rows, width}, on_cuda)).to(dtype);
        const torch::Tensor up = torch::randn({rows, width}, on_cuda).to(dtype);
        EXPECT_TRUE(torch::allclose(kernels::silu_mul(gate, up),
                                    torch::nn::functional::silu(gate) * up, tolerance, tolerance))
            << c10::toString(dtype);
      }
    }
  }
}

}  // namespace
}  // namespace gpubench
