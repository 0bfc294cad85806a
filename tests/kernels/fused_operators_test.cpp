// gpubench's own operators (kernels/fused_operators.h): on the CPU each is the composition it
// replaces, bit for bit, written out here as Hugging Face writes it; a profile sees it as one
// operator (one launch where the build has its CUDA kernel); under autograd the composition
// runs, with its backward. The CUDA kernels against the compositions on real shapes run on a GPU
// only (the GPU check's `kernels` tier).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/fused_compositions.h"
#include "kernels/fused_operators.h"
#include "recorded_operators.h"
#include "torch_support/compat.h"

// The CUDA comparisons run where there is a device and the build compiled the kernels (the GPU
// check's kernels tier runs them).
#define SKIP_WITHOUT_CUDA_KERNELS()                                                           \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device (the GPU check runs it)"; \
  if (!kernels::has_cuda_kernels()) GTEST_SKIP() << "this build compiled no CUDA kernels"

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

// A decode step's rotary embedding and cache write: what Llama's step computed in its operators
// (q and k rotated as one tensor, Hugging Face's rotate_half written out; k and v written at the
// position), bit for bit, in bf16, fp16 and fp32, GQA's heads, a batch of 2; and an FP8 cache
// (2.11) saturated and written as its bytes.
TEST(FusedOperators, RotaryCacheWriteIsTheStepsArithmeticBitForBit) {
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  constexpr int64_t kBatch = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 16, kCapacity = 8;
  for (const auto dtype : floating_dtypes()) {
    const auto options = torch::TensorOptions().dtype(dtype);
    // q, k and v as views of one stacked product's output, as the model hands them on.
    const torch::Tensor stacked = torch::randn({kBatch, 1, (kHeads + 2 * kKvHeads) * kHeadDim});
    const auto heads = [&](int64_t first, int64_t count) {
      return stacked.to(dtype)
          .narrow(-1, first * kHeadDim, count * kHeadDim)
          .view({kBatch, 1, count, kHeadDim})
          .transpose(1, 2);
    };
    const torch::Tensor q = heads(0, kHeads), k = heads(kHeads, kKvHeads),
                        v = heads(kHeads + kKvHeads, kKvHeads);
    const torch::Tensor angle = 0.7 * torch::arange(kHeadDim / 2).repeat(2).unsqueeze(0);
    const torch::Tensor cos = angle.cos().to(dtype), sin = angle.sin().to(dtype);
    const torch::Tensor signed_sin = torch::cat(
        {-sin.narrow(-1, 0, kHeadDim / 2), sin.narrow(-1, kHeadDim / 2, kHeadDim / 2)}, -1);
    const torch::Tensor position = torch::full({1}, 5, torch::kLong);
    torch::Tensor keys = torch::zeros({kBatch, kKvHeads, kCapacity, kHeadDim}, options);
    torch::Tensor values = torch::zeros_like(keys);
    const torch::Tensor rotated_q =
        kernels::rotary_cache_write(q, k, v, cos, signed_sin, keys, values, position);
    const auto hugging_face = [&](const torch::Tensor& x) {
      const torch::Tensor x1 = x.narrow(-1, 0, kHeadDim / 2),
                          x2 = x.narrow(-1, kHeadDim / 2, kHeadDim / 2);
      return x * cos + torch::cat({-x2, x1}, -1) * sin;
    };
    const std::string where = c10::toString(dtype);
    EXPECT_TRUE(torch::equal(rotated_q, hugging_face(q))) << where;
    EXPECT_TRUE(torch::equal(keys.select(2, 5), hugging_face(k).squeeze(2))) << where;
    EXPECT_TRUE(torch::equal(values.select(2, 5), v.squeeze(2))) << where;
    EXPECT_EQ(keys.narrow(2, 0, 5).abs().sum().item<double>(), 0.0) << where << ": other slots";
    if (compat::kHasFp8 && dtype == torch::kBFloat16) {
      torch::Tensor fp8_keys = torch::zeros(keys.sizes(), options.dtype(compat::float8_e4m3()));
      torch::Tensor fp8_values = torch::zeros_like(fp8_keys);
      const torch::Tensor big_v = v * 1000;
      kernels::rotary_cache_write(q, k, big_v, cos, signed_sin, fp8_keys, fp8_values, position);
      EXPECT_TRUE(
          torch::equal(fp8_values.select(2, 5).to(dtype),
                       big_v.clamp(-448, 448).squeeze(2).to(compat::float8_e4m3()).to(dtype)));
    }
  }
}

// How far decode attention's output `got` lies past the roundings it may make (negative within
// them): against Hugging Face's eager attention in float64 over the positions up to `at` (each
// query head against its key/value head repeated, q k^T times the scale, softmax, times v). The
// composition rounds the scores, the scale's product, the probabilities and the output to q's
// dtype (u) after float32 sums (u32), so: each score within 2 u |s| + head_dim u32 s_abs (s_abs =
// scale |q||k|), each probability within twice that relatively, plus u; the output within that
// times max |v|, plus its own sum's and its rounding. (The CUDA kernel rounds the output only.)
// With `sinks` (gpt-oss's eager_attention_forward): each head's sink logit joins its softmax
// and is dropped after it; the composition then rounds no more than without them.
double max_error_past_rounding(const torch::Tensor& got, const torch::Tensor& q,
                               const torch::Tensor& keys, const torch::Tensor& values, int64_t at,
                               double scale, const torch::Tensor& sinks = {}) {
  const int64_t group = q.size(1) / keys.size(1), head_dim = q.size(3);
  const auto filled = [&](const torch::Tensor& cache) {
    return cache.to(torch::kDouble).narrow(2, 0, at + 1).repeat_interleave(group, 1);
  };
  const torch::Tensor q64 = q.to(torch::kDouble), k64 = filled(keys), v64 = filled(values);
  const torch::Tensor scores = torch::matmul(q64, k64.transpose(-2, -1)) * scale;
  torch::Tensor probabilities = torch::softmax(scores, -1);
  if (sinks.defined()) {
    const torch::Tensor sink =
        sinks.to(torch::kDouble).reshape({1, -1, 1, 1}).expand({q.size(0), q.size(1), 1, 1});
    probabilities = torch::softmax(torch::cat({scores, sink}, -1), -1).narrow(-1, 0, at + 1);
  }
  const torch::Tensor expected = torch::matmul(probabilities, v64);
  const double u32 = std::ldexp(1.0, -24);
  const double u = q.scalar_type() == torch::kFloat  ? u32
                   : q.scalar_type() == torch::kHalf ? std::ldexp(1.0, -11)
                                                     : std::ldexp(1.0, -8);
  const double s_abs =
      (torch::matmul(q64.abs(), k64.abs().transpose(-2, -1)) * scale).max().item<double>();
  const double score_error = 2 * u * scores.abs().max().item<double>() + head_dim * u32 * s_abs;
  const double v_max = v64.abs().max().item<double>();
  const double bound = (2 * score_error + u) * v_max + (at + 1) * u32 * v_max + u * v_max;
  return (got.to(torch::kDouble) - expected).abs().max().item<double>() - bound;
}

// Decode attention's CPU form, the composition, within the roundings it makes of Hugging Face's
// eager attention (max_error_past_rounding). Positions past the token hold 400 (finite in e4m3
// too), which would show: masked, they add nothing. bf16, float32 and (2.11) an FP8 cache, GQA's
// groups, a batch of 2, the first, a middle and the last position; without sinks (Llama's) and
// with a sink a head (gpt-oss's, in q's dtype and in float32, some large enough to take most of
// a head's weight).
TEST(FusedOperators, DecodeAttentionIsEagerAttentionOverTheFilledCache) {
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  constexpr int64_t kBatch = 2, kHeads = 8, kKvHeads = 2, kHeadDim = 32, kCapacity = 24;
  const double scale = 1 / std::sqrt(static_cast<double>(kHeadDim));
  std::vector<std::pair<torch::ScalarType, torch::ScalarType>> cases = {
      {torch::kBFloat16, torch::kBFloat16}, {torch::kFloat, torch::kFloat}};
  if (compat::kHasFp8) cases.emplace_back(torch::kBFloat16, compat::float8_e4m3());
  for (const auto& [dtype, cache_dtype] : cases) {
    for (const int64_t at : {int64_t{0}, int64_t{13}, kCapacity - 1}) {
      const torch::Tensor q = torch::randn({kBatch, kHeads, 1, kHeadDim}).to(dtype);
      torch::Tensor keys = torch::randn({kBatch, kKvHeads, kCapacity, kHeadDim});
      torch::Tensor values = torch::randn({kBatch, kKvHeads, kCapacity, kHeadDim});
      keys.narrow(2, at + 1, kCapacity - at - 1).fill_(400);
      values.narrow(2, at + 1, kCapacity - at - 1).fill_(400);
      keys = keys.to(cache_dtype);
      values = values.to(cache_dtype);
      const torch::Tensor position = torch::full({1}, at, torch::kLong);
      const torch::Tensor drawn_sinks = torch::randn({kHeads}) * 4;
      for (const torch::Tensor& sinks :
           {torch::Tensor(), drawn_sinks.to(dtype), drawn_sinks.to(torch::kFloat)}) {
        const torch::Tensor got =
            kernels::decode_attention(q, keys, values, position, scale, sinks);
        const c10::optional<at::Tensor> given =
            sinks.defined() ? c10::optional<at::Tensor>(sinks) : c10::nullopt;
        EXPECT_TRUE(torch::equal(got, kernels::composition::decode_attention_composition(
                                          q, keys, values, position, scale, given)));
        const double past_rounding =
            max_error_past_rounding(got, q, keys, values, at, scale, sinks);
        EXPECT_LE(past_rounding, 0)
            << c10::toString(dtype) << " cache " << c10::toString(cache_dtype) << " at position "
            << at
            << (sinks.defined()
                    ? " with sinks in " + std::string(c10::toString(sinks.scalar_type()))
                    : std::string());
        EXPECT_EQ(got.sizes(), q.sizes());
        EXPECT_EQ(got.scalar_type(), dtype);
      }
    }
  }
}

// How far a weight-only product `got` lies past its roundings (negative within them): against
// x (codes scale)^T in float64. Float32 products summed over `in` terms (in u32 |x||W| at worst)
// and one rounding of the output to x's dtype (u |y|).
double weight_only_product_past_rounding(const torch::Tensor& got, const torch::Tensor& x,
                                         const torch::Tensor& codes, const torch::Tensor& scale) {
  const torch::Tensor w = codes.to(torch::kDouble) * scale.to(torch::kDouble).reshape({-1, 1});
  const torch::Tensor x64 = x.to(torch::kDouble);
  const torch::Tensor expected = torch::matmul(x64, w.t());
  const double u = x.scalar_type() == torch::kFloat  ? std::ldexp(1.0, -24)
                   : x.scalar_type() == torch::kHalf ? std::ldexp(1.0, -11)
                                                     : std::ldexp(1.0, -8);
  const torch::Tensor bound =
      codes.size(1) * std::ldexp(1.0, -24) * torch::matmul(x64.abs(), w.abs().t()) +
      u * expected.abs();
  return ((got.to(torch::kDouble) - expected).abs() - bound).max().item<double>();
}

// The FP8 weight-only product's CPU form, the composition: within its roundings of the
// dequantised weight's product, for one scale and a scale a row ([out, 1] and [out]), a decode
// step's row and a batch's, bf16 and float32 activations.
TEST(FusedOperators, Fp8WeightLinearIsTheDequantisedProduct) {
  if (!compat::kHasFp8) GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no FP8";
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  const torch::Tensor codes =
      (100 * torch::randn({48, 64})).clamp(-448, 448).to(compat::float8_e4m3());
  const torch::Tensor row_scales = torch::rand({48}) / 100 + 1e-3;
  for (const torch::Tensor& scale : {torch::full({}, 0.01), row_scales.unsqueeze(1), row_scales}) {
    for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
      for (const auto& shape : {std::vector<int64_t>{1, 1, 64}, std::vector<int64_t>{5, 64}}) {
        const torch::Tensor x = torch::randn(shape).to(dtype);
        const torch::Tensor got = kernels::fp8_weight_linear(x, codes, scale);
        EXPECT_EQ(got.scalar_type(), dtype);
        EXPECT_EQ(got.size(-1), 48);
        EXPECT_LE(weight_only_product_past_rounding(got.reshape({-1, 48}), x.reshape({-1, 64}),
                                                    codes, scale),
                  0)
            << c10::toString(dtype) << ", scale of " << scale.numel();
      }
    }
  }
}

// FP8 quantisation's CPU form is its composition, bit for bit, whichever way it is called: the
// amax's reciprocal times the format's largest (clamped so that zeros keep a finite scale),
// rounded to x's dtype, x times it in x's dtype, cast; rowwise a power of two a row.
TEST(FusedOperators, QuantizeFp8IsItsArithmeticBitForBit) {
  if (!compat::kHasFp8) GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no FP8";
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
    const torch::Tensor x = (5 * torch::randn({6, 64})).to(dtype);
    for (const auto& [format, largest] : std::vector<std::pair<torch::ScalarType, double>>{
             {compat::float8_e4m3(), 448.0}, {compat::float8_e5m2(), 57344.0}}) {
      for (const bool rowwise : {false, true}) {
        const auto [codes, scale] = kernels::quantize_fp8(
            x, format, rowwise ? std::vector<int64_t>{1} : std::vector<int64_t>{}, largest);
        const torch::Tensor amax =
            rowwise ? x.abs().to(torch::kFloat).amax(1, true) : x.abs().to(torch::kFloat).max();
        torch::Tensor applied = amax.reciprocal() * static_cast<float>(largest);
        if (rowwise) applied = torch::exp2(torch::floor(torch::log2(applied)));
        applied = applied.to(dtype);
        const std::string where = std::string(c10::toString(dtype)) + " " + c10::toString(format) +
                                  (rowwise ? " rowwise" : "");
        EXPECT_TRUE(
            torch::equal(codes.to(torch::kFloat), (x * applied).to(format).to(torch::kFloat)))
            << where;
        EXPECT_TRUE(torch::equal(scale, applied.to(torch::kFloat).reciprocal())) << where;
      }
    }
  }
}

// A profile names each operator once; CUDA launches it as one kernel where the build compiled
// them (testing::operators_of_one_cuda_kernel), its CPU composition's operators otherwise.
TEST(FusedOperators, AProfileSeesEachAsOneOperator) {
  const c10::InferenceMode inference_mode;
  const torch::Tensor x = torch::randn({4, 64}), weight = torch::ones({64});
  const torch::Tensor heads = torch::randn({1, 2, 1, 8}), table = torch::ones({1, 8});
  torch::Tensor keys = torch::zeros({1, 2, 4, 8}), values = torch::zeros({1, 2, 4, 8});
  const torch::Tensor position = torch::zeros({1}, torch::kLong);
  const torch::Tensor codes =
      compat::kHasFp8 ? torch::ones({16, 64}).to(compat::float8_e4m3()) : torch::Tensor();
  const torch::Tensor one = torch::ones({});
  const torch::Tensor int8_codes = torch::ones({16, 64}, torch::kChar);
  const torch::Tensor x_scales = torch::ones({16});
  const testing::RecordedOperators recorded = testing::record_operators([&] {
    kernels::rms_norm(x, weight, 1e-6, RmsWeight::kAfterRounding);
    kernels::add_rms_norm(x, x, weight, 1e-6, RmsWeight::kAfterRounding);
    kernels::silu_mul(x, x);
    kernels::rotary_cache_write(heads, heads, heads, table, table, keys, values, position);
    kernels::decode_attention(heads, keys, values, position, 0.5);
    if (compat::kHasIntWeights) kernels::int8_weight_linear(x, int8_codes, x_scales);
    if (compat::kHasFp8) {
      kernels::fp8_weight_linear(x, codes, one);
      kernels::quantize_fp8(x, compat::float8_e4m3(), {}, 448);
    }
  });
  size_t own_launches = 0;
  for (const kernels::OwnOperator& own : kernels::own_operators()) {
    const bool fp8 =
        own.name == "gpubench::fp8_weight_linear" || own.name == "gpubench::quantize_fp8";
    if (fp8 && !compat::kHasFp8) continue;
    if (own.name == "gpubench::int8_weight_linear" && !compat::kHasIntWeights) continue;
    EXPECT_EQ(recorded.called.count(own.name), 1u) << own.name;
    const auto launches = std::count(recorded.launches.begin(), recorded.launches.end(), own.name);
    EXPECT_EQ(launches, kernels::has_cuda_kernels() ? own.cuda_launches : 0) << own.name;
    own_launches += own.cuda_launches;
  }
  if (kernels::has_cuda_kernels()) {
    EXPECT_EQ(recorded.launches.size(), own_launches);
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
  for (const kernels::OwnOperator& own : kernels::own_operators()) {
    EXPECT_EQ(recorded.called.count(own.name), 0u) << own.name;
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
  SKIP_WITHOUT_CUDA_KERNELS();
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  const auto on_cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const auto dtype : floating_dtypes()) {
    // Two roundings to the dtype apart (2 ulps: 2^-7 bf16, 2^-10 fp16); in float32 the squares'
    // sum in another order, about sqrt(n) u over 8,192 terms (5e-6). The worst case, n u (2^-11),
    // is not what this holds: a float32 difference past 1e-5 is worth looking at.
    const double tolerance = dtype == torch::kFloat  ? 1e-5
                             : dtype == torch::kHalf ? std::ldexp(1.0, -10)
                                                     : std::ldexp(1.0, -7);
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
      // Llama 3.1 8B's attention (32 heads, 8 key/value heads of 128) at batch 1 and 4 (the
      // rows' count), q, k and v views of one stacked product, the position on the device: the
      // same arithmetic in the same order, so the same bits.
      if (rows == 1 || rows == 512) {
        const int64_t batch = rows == 1 ? 1 : 4, heads = 32, kv_heads = 8, head_dim = 128;
        const torch::Tensor stacked =
            torch::randn({batch, 1, (heads + 2 * kv_heads) * head_dim}, on_cuda).to(dtype);
        const auto split = [&](int64_t first, int64_t count) {
          return stacked.narrow(-1, first * head_dim, count * head_dim)
              .view({batch, 1, count, head_dim})
              .transpose(1, 2);
        };
        const torch::Tensor angle = torch::rand({1, head_dim}, on_cuda) * 6;
        const torch::Tensor cos = angle.cos().to(dtype), signed_sin = angle.sin().to(dtype);
        const torch::Tensor position = torch::full({1}, 700, on_cuda.dtype(torch::kLong));
        torch::Tensor keys = torch::zeros({batch, kv_heads, 1024, head_dim}, on_cuda.dtype(dtype));
        torch::Tensor values = torch::zeros_like(keys);
        const torch::Tensor q = split(0, heads), k = split(heads, kv_heads),
                            v = split(heads + kv_heads, kv_heads);
        const torch::Tensor rotated =
            kernels::rotary_cache_write(q, k, v, cos, signed_sin, keys, values, position);
        const torch::Tensor halves_q = torch::cat({q.narrow(-1, 64, 64), q.narrow(-1, 0, 64)}, -1);
        EXPECT_TRUE(torch::equal(rotated, q * cos + halves_q * signed_sin)) << c10::toString(dtype);
        const torch::Tensor halves_k = torch::cat({k.narrow(-1, 64, 64), k.narrow(-1, 0, 64)}, -1);
        EXPECT_TRUE(torch::equal(keys.narrow(2, 700, 1), k * cos + halves_k * signed_sin));
        EXPECT_TRUE(torch::equal(values.narrow(2, 700, 1), v));
        EXPECT_EQ(keys.narrow(2, 0, 700).abs().sum().item<double>(), 0.0);
      }
      for (const int64_t width : {14336, 28672}) {
        const torch::Tensor gate = (4 * torch::randn({rows, width}, on_cuda)).to(dtype);
        const torch::Tensor up = torch::randn({rows, width}, on_cuda).to(dtype);
        EXPECT_TRUE(torch::allclose(kernels::silu_mul(gate, up),
                                    torch::nn::functional::silu(gate) * up, tolerance, tolerance))
            << c10::toString(dtype);
        // gate and up as the halves of one stacked product's output [rows, 1, 2 x width], read
        // in place.
        const torch::Tensor stacked = torch::cat({gate, up}, -1).view({rows, 1, 2 * width});
        const torch::Tensor gate_half = stacked.narrow(-1, 0, width),
                            up_half = stacked.narrow(-1, width, width);
        EXPECT_TRUE(torch::allclose(kernels::silu_mul(gate_half, up_half),
                                    (torch::nn::functional::silu(gate) * up).view({rows, 1, width}),
                                    tolerance, tolerance))
            << c10::toString(dtype) << ", halves of a stacked product";
      }
    }
  }
}

// The decode attention kernel on the device, within the composition's roundings of eager
// attention (it rounds only its output): Llama 3.2 1B's heads (32 of 64 over 8), gpt-oss's (64
// of 64 over 8, with a sink a head), 3.1 8B's (32 of 128 over 8), 70B's (64 over 8) and 405B's
// (128 over 8, a group of 16); batch 1 and 4; a
// cache of 1,024 and one of 40,000 (longer splits); the first, a middle and the last position,
// read from the device; bf16, fp16, float32 and an FP8 cache. The cache past the position holds
// 400: the kernel must not read it.
TEST(FusedOperators, CudaDecodeAttentionComputesItsComposition) {
  SKIP_WITHOUT_CUDA_KERNELS();
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  const auto on_cuda = torch::TensorOptions().device(torch::kCUDA);
  struct Shape {
    int64_t heads, kv_heads, head_dim;
  };
  for (const Shape shape : {Shape{32, 8, 64}, Shape{64, 8, 64}, Shape{32, 8, 128},
                            Shape{64, 8, 128}, Shape{128, 8, 128}}) {
    const double scale = 1 / std::sqrt(static_cast<double>(shape.head_dim));
    for (const int64_t capacity : {int64_t{1024}, int64_t{40000}}) {
      for (const auto& [dtype, cache_dtype] :
           std::vector<std::pair<torch::ScalarType, torch::ScalarType>>{
               {torch::kBFloat16, torch::kBFloat16},
               {torch::kHalf, torch::kHalf},
               {torch::kFloat, torch::kFloat},
               {torch::kBFloat16, compat::float8_e4m3()}}) {
        const int64_t batch = capacity == 1024 ? 4 : 1;
        torch::Tensor keys =
            torch::randn({batch, shape.kv_heads, capacity, shape.head_dim}, on_cuda);
        torch::Tensor values = torch::randn_like(keys);
        const torch::Tensor q = torch::randn({batch, shape.heads, 1, shape.head_dim}, on_cuda);
        for (const int64_t at : {int64_t{0}, capacity / 2 + 3, capacity - 1}) {
          torch::Tensor k = keys.clone(), v = values.clone();
          k.narrow(2, at + 1, capacity - at - 1).fill_(400);
          v.narrow(2, at + 1, capacity - at - 1).fill_(400);
          k = k.to(cache_dtype);
          v = v.to(cache_dtype);
          const torch::Tensor position = torch::full({1}, at, on_cuda.dtype(torch::kLong));
          // gpt-oss's heads (64/8 x 64) with a sink a head, in q's dtype as the model holds them.
          const torch::Tensor sinks = shape.heads == 64 && shape.head_dim == 64
                                          ? (torch::randn({shape.heads}, on_cuda) * 4).to(dtype)
                                          : torch::Tensor();
          const torch::Tensor got =
              kernels::decode_attention(q.to(dtype), k, v, position, scale, sinks);
          const double past_rounding =
              max_error_past_rounding(got.cpu(), q.to(dtype).cpu(), k.cpu(), v.cpu(), at, scale,
                                      sinks.defined() ? sinks.cpu() : sinks);
          EXPECT_LE(past_rounding, 0)
              << shape.heads << "/" << shape.kv_heads << "x" << shape.head_dim << " "
              << c10::toString(dtype) << " cache " << c10::toString(cache_dtype) << " of "
              << capacity << " at " << at << (sinks.defined() ? " with sinks" : "");
        }
      }
    }
  }
}

// Llama 3.1 8B's products as [in, out]: stacked q, k, v (4,096 to 6,144), stacked gate and up
// (4,096 to 28,672) and down (14,336 to 4,096).
const std::vector<std::pair<int64_t, int64_t>> kLlama8bProducts = {
    {4096, 6144}, {4096, 28672}, {14336, 4096}};

// A weight-only product on the device at a decode step's rows (1, 3, 8) and one more (9, which
// runs the composition), within its roundings of the dequantised product.
void expect_rows_within_rounding(const std::function<torch::Tensor(const torch::Tensor&)>& product,
                                 const torch::Tensor& codes, const torch::Tensor& scale,
                                 torch::ScalarType dtype, const std::string& what) {
  for (const int64_t rows : {1, 3, 8, 9}) {
    const torch::Tensor x = torch::randn({rows, codes.size(1)}, codes.device()).to(dtype);
    const torch::Tensor got = product(x);
    EXPECT_LE(weight_only_product_past_rounding(got.cpu(), x.cpu(), codes.cpu(), scale.cpu()), 0)
        << what << ", " << codes.size(1) << " to " << codes.size(0) << ", " << rows << " rows, "
        << c10::toString(dtype);
  }
}

// The FP8 weight-only kernel on the device at Llama 3.1 8B's products; one scale and a scale a
// row; bf16 and fp16 activations.
TEST(FusedOperators, CudaFp8WeightLinearComputesItsComposition) {
  SKIP_WITHOUT_CUDA_KERNELS();
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  const auto on_cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const auto& [in, out] : kLlama8bProducts) {
    const torch::Tensor codes =
        (100 * torch::randn({out, in}, on_cuda)).clamp(-448, 448).to(compat::float8_e4m3());
    const torch::Tensor row_scales = torch::rand({out, 1}, on_cuda) / 1000 + 1e-4;
    for (const torch::Tensor& scale : {torch::full({}, 1e-3, on_cuda), row_scales}) {
      for (const auto dtype : {torch::kBFloat16, torch::kHalf}) {
        expect_rows_within_rounding(
            [&](const torch::Tensor& x) { return kernels::fp8_weight_linear(x, codes, scale); },
            codes, scale, dtype, "fp8, scale of " + std::to_string(scale.numel()));
      }
    }
  }
}

// The int8 weight-only kernel on the device at the same products (9 rows run LibTorch's
// _weight_int8pack_mm); bf16 and fp16, the scales in the activations' dtype as the int8 format
// holds them.
TEST(FusedOperators, CudaInt8WeightLinearComputesItsComposition) {
  SKIP_WITHOUT_CUDA_KERNELS();
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  const auto on_cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const auto& [in, out] : kLlama8bProducts) {
    const torch::Tensor codes = torch::randint(-128, 128, {out, in}, on_cuda).to(torch::kChar);
    for (const auto dtype : {torch::kBFloat16, torch::kHalf}) {
      const torch::Tensor scales = (torch::rand({out}, on_cuda) / 1000 + 1e-4).to(dtype);
      expect_rows_within_rounding(
          [&](const torch::Tensor& x) { return kernels::int8_weight_linear(x, codes, scales); },
          codes, scales, dtype, "int8");
    }
  }
}

// The FP8 quantisation kernels on the device give the composition's codes and scales bit for
// bit: a tensor of Llama 3.1 8B's MLP width (4,096 x 14,336: 57 partial amaxes joined), rows of
// 4,096 a scale each, an all-zero tensor; bf16, fp16 and float32; e4m3 and e5m2.
TEST(FusedOperators, CudaQuantizeFp8ComputesItsComposition) {
  SKIP_WITHOUT_CUDA_KERNELS();
  torch::manual_seed(0);
  const c10::InferenceMode inference_mode;
  const auto on_cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    const std::vector<torch::Tensor> inputs = {(3 * torch::randn({4096, 14336}, on_cuda)).to(dtype),
                                               (3 * torch::randn({2048, 4096}, on_cuda)).to(dtype),
                                               torch::zeros({64, 64}, on_cuda.dtype(dtype))};
    for (const auto& [format, largest] : std::vector<std::pair<torch::ScalarType, double>>{
             {compat::float8_e4m3(), 448.0}, {compat::float8_e5m2(), 57344.0}}) {
      for (const torch::Tensor& x : inputs) {
        for (const bool rowwise : {false, true}) {
          const std::vector<int64_t> along =
              rowwise ? std::vector<int64_t>{1} : std::vector<int64_t>{};
          const auto [codes, scale] = kernels::quantize_fp8(x, format, along, largest);
          const auto [expected_codes, expected_scale] =
              kernels::composition::quantize_fp8_composition(x, format, along, largest);
          const std::string where = std::string(c10::toString(dtype)) + " " +
                                    c10::toString(format) + " " + std::to_string(x.size(0)) + "x" +
                                    std::to_string(x.size(1)) + (rowwise ? " rowwise" : "");
          EXPECT_TRUE(torch::equal(scale, expected_scale)) << where;
          EXPECT_TRUE(torch::equal(codes.to(torch::kFloat), expected_codes.to(torch::kFloat)))
              << where;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpubench
