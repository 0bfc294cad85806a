#include "run/fit_probes.h"

#include <algorithm>

#include "common/errors.h"
#include "common/phase_progress.h"
#include "features/parallelism/probed_slice.h"
#include "memory/run_memory.h"
#include "memory/tensor_memory.h"
#include "results/memory_info.h"
#include "system/machine.h"

namespace gpubench {
namespace {

// The whole model is probed where its probe bytes take at most this much (on the CPU; on a GPU,
// half its memory): more and the probes use one and two blocks.
constexpr int64_t kWholeModelCpuBytes = int64_t{2} << 30;

}  // namespace

void check_fit_shape(const ResolvedBenchmark& b) {
  if (b.batch_size <= 0) throw UsageError("fit needs a batch size of 1 or more");
  if (b.blocks > 0) {
    throw UsageError("blocks " + std::to_string(b.blocks) +
                     ": fit predicts the whole model, probing one and two blocks itself; "
                     "--blocks applies to train and infer");
  }
}

double ProbeModels::extra_blocks(const ModelInfo& info) const {
  return static_cast<double>(info.capabilities.blocks) /
             static_cast<double>(info.capabilities.block_period) -
         1;
}

double ProbeModels::extra_vocabularies(const ModelInfo& info) const {
  return narrowed ? static_cast<double>(info.capabilities.vocab - kProbeVocab) /
                        static_cast<double>(kProbeVocab)
                  : 0.0;
}

ProbeModels ProbeModels::at_width(int64_t divisor, bool keeping_key_value_heads) const {
  ProbeModels models = *this;
  models.width_divisor = divisor;
  models.keeps_key_value_heads = divisor > 1 && keeping_key_value_heads;
  for (ModelOptions* options : models.each_model()) {
    options->width_divisor = divisor;
    options->width_keeps_key_value_heads = models.keeps_key_value_heads;
  }
  return models;
}

ProbeModels ProbeModels::with_experts(int64_t count) const {
  ProbeModels models = *this;
  models.experts = count;
  for (ModelOptions* options : models.each_model()) {
    options->experts = count;
  }
  return models;
}

int64_t ProbeModels::experts_factor() const {
  return experts > 0 ? held_experts / experts : 1;
}

ProbeModels ProbeModels::largest_set() const {
  const ProbeModels wide = width_divisor > 1 ? twice_as_wide() : *this;
  return experts > 0 ? wide.with_twice_the_experts() : wide;
}

bool probed_undrawn(const ModelInfo& info) {
  return info.count || info.capabilities.memory_independent_of_weights;
}

ModelOptions ProbeModels::largest(const ModelOptions& whole) const {
  if (!by_blocks) return whole;
  ModelOptions options = two_blocks;
  options.width_divisor = 1;
  options.width_keeps_key_value_heads = false;
  options.experts = whole.experts;
  return options;
}

namespace {

// Whether the model narrowed by `k` still splits as asked (parallelism's rule), and LoRA's rank
// stays within every adapted width.
bool splits_at_width(const ModelInfo& info, const ModelOptions& options, int64_t k,
                     bool keeping_key_value_heads) {
  if (!parallelism::splits_at_width(info.capabilities.split_counts,
                                    options.placement.tensor_parallel_ranks(), k,
                                    keeping_key_value_heads)) {
    return false;
  }
  if (options.lora.targets.empty()) return true;
  for (const auto& [role, limit] : info.capabilities.lora_rank_limits) {
    if (options.lora.rank > limit / k) return false;
  }
  return true;
}

// The width divisor for probes by blocks: where the two-block model at the model's width would
// hold more than kRealWidthProbeBytes, the model's largest that still splits as asked, if 4 or
// more (at 2 the second width is the model's own); else 1. Where keeping the key/value heads whole
// allows a larger divisor (405B's 8 heads do not divide by 16, nor 8 tensor-parallel ranks' one
// head each by 4), they are kept, though not under LoRA: a key or value adapter's B (their width
// by the rank) would then not change with the width, a constant that the parabola through 0 and
// two widths leaves out.
// MXFP4's blocks of 32 run along the hidden size and the expert width (gpt-oss's 2880: 90
// blocks), which no power of two from 4 divides into whole blocks: experts held in MXFP4 keep
// their width.
ProbeModels narrowed_in_width(const ModelInfo& info, const ProbeModels& models,
                              const FitOptions& fit_options, const ProbeBytes& bytes) {
  if (!models.by_blocks || models.two_blocks.experts_in_mxfp4) return models;
  // A mixture of experts' probes are narrowed whatever their bytes: with fewer experts their
  // tokens are 8 or more (train/fit_probe.cpp), and at its width their experts' products took two
  // minutes of gpt-oss-20b's LoRA fit; one expert-parallel rank's 4 of its 32, 36 s.
  if (!fit_options.width_divisor && info.capabilities.experts == 0 &&
      bytes(models.largest_set().two_blocks) <= kRealWidthProbeBytes) {
    return models;
  }
  const auto largest = [&](int64_t most, bool keeping) {
    int64_t k = std::min(most, fit_options.width_divisor.value_or(kMaxWidthDivisor));
    while (k >= 4 && !splits_at_width(info, models.two_blocks, k, keeping)) k /= 2;
    return k >= 4 ? k : 1;
  };
  const int64_t divided = largest(info.capabilities.max_width_divisor, false);
  const int64_t kept =
      models.two_blocks.lora.targets.empty()
          ? largest(info.capabilities.max_width_divisor_keeping_key_value_heads, true)
          : 1;
  return kept > divided ? models.at_width(kept, /*keeping_key_value_heads=*/true)
                        : models.at_width(divided);
}

// Top-k experts and twice that, where the model has four times its top-k or more in a whole
// number of them: gpt-oss-120b's probes then hold 4 and 8 of its 128.
ProbeModels with_fewer_experts(const ModelInfo& info, const ProbeModels& models,
                               const FitOptions& fit_options) {
  const int64_t experts = held_experts(info, models.one_block);
  const int64_t top_k = models.one_block.experts_per_token > 0
                            ? models.one_block.experts_per_token
                            : info.capabilities.experts_per_token;
  if (!models.by_blocks || !fit_options.narrow_experts || top_k <= 0 || experts < 4 * top_k ||
      experts % top_k != 0) {
    return models;
  }
  ProbeModels fewer = models.with_experts(top_k);
  fewer.held_experts = experts;
  return fewer;
}

}  // namespace

ProbeModels probe_models(const ModelInfo& info, const ModelOptions& options, torch::Device device,
                         const FitOptions& fit_options, const ProbeBytes& bytes) {
  const int64_t whole_limit =
      device.is_cuda() ? tensor_memory::device_total_bytes(device) / 2 : kWholeModelCpuBytes;
  ProbeModels models;
  models.by_blocks =
      info.capabilities.blocks > 1 && (fit_options.force_blocks || bytes(options) > whole_limit);
  models.one_block = models.two_blocks = models.wider = options;
  const int64_t group = info.capabilities.block_period;
  models.one_block.blocks = models.wider.blocks = group;
  models.two_blocks.blocks = 2 * group;
  models.narrowed =
      models.by_blocks && fit_options.narrow_vocab && info.capabilities.vocab > 2 * kProbeVocab;
  if (models.narrowed) {
    models.one_block.vocab = models.two_blocks.vocab = kProbeVocab;
    models.wider.vocab = 2 * kProbeVocab;
  }
  return narrowed_in_width(info, with_fewer_experts(info, models, fit_options), fit_options, bytes);
}

void check_host_memory(const ProbeModels& models, const ModelOptions& whole,
                       const ResolvedBenchmark& b, const FitOptions& fit_options,
                       const ProbeBytes& bytes, const std::string& what) {
  const std::optional<int64_t> host =
      fit_options.host_available ? fit_options.host_available : host_available_memory();
  if (!host || b.device == DeviceKind::kCuda) return;
  const ProbeModels largest = models.largest_set();
  const int64_t needed = models.by_blocks ? std::max(bytes(largest.two_blocks),
                                                     models.narrowed ? bytes(largest.wider) : 0)
                                          : bytes(whole);
  if (needed > *host) {
    throw UsageError("the host cannot run fit's probes of " + b.model + ": the largest needs " +
                     bytes_text(needed) + " " + what + " and the host has " + bytes_text(*host) +
                     " available");
  }
}

namespace {

// LibTorch runs a CPU's bf16 and fp16 matmuls through oneDNN where the CPU has AVX-512 (its
// mkldnn_bf16_device_check), and through its own reference kernel elsewhere: 5.1 GFLOP/s against
// fp32's 73.5 on one core of a Zen 3 EPYC with AVX2 only, where gpt-oss-20b's inference probes
// at the whole budget ran for over five minutes. Training probes longer than 4 tokens run the
// reference kernel on AVX-512 CPUs too (train/fit_probe.cpp's NativeCpuMatmuls): Llama 3 8B full
// bf16's probes at 32 tokens ran past 300 s on a Xeon with AMX. There a 16-bit probe gets a
// sixteenth of the budget, which brings a large model's probes to the shortest lengths, where
// oneDNN runs them.
double cpu_flop_budget(const ResolvedBenchmark& b, const FitOptions& fit, ProbePass pass) {
  const bool sixteen_bit = b.precision == Precision::kBf16 || b.precision == Precision::kFp16;
  const bool reference_kernel = pass == ProbePass::kForwardAndBackward || !cpu_has_flag("avx512bw");
  return sixteen_bit && reference_kernel ? fit.cpu_flop_budget / 16 : fit.cpu_flop_budget;
}

}  // namespace

int64_t probe_length(int64_t seq, const ResolvedBenchmark& b, double flops_per_token,
                     const FitOptions& fit, ProbePass pass) {
  if (seq <= 0 || b.device == DeviceKind::kCuda || flops_per_token <= 0) return seq;
  auto cost = [&](int64_t length) { return 2.0 * flops_per_token * static_cast<double>(length); };
  const double budget = cpu_flop_budget(b, fit, pass);
  while (seq > fit.shortest_probe && cost(seq) > budget) {
    seq = std::max(fit.shortest_probe, (seq + 1) / 2);
  }
  return seq;
}

// Built up one by one: GCC 12 warns (wrongly, -Wnonnull) on assigning a braced list.
std::vector<ProbeShape> probe_shapes(int64_t seq, int64_t smallest_batch) {
  std::vector<ProbeShape> shapes;
  const int64_t one = smallest_batch, two = 2 * smallest_batch;
  if (seq > 0) {
    const int64_t l3 = std::max<int64_t>(seq, 3), l2 = std::max<int64_t>(2, l3 / 2),
                  l1 = std::max<int64_t>(1, l3 / 4);
    shapes.push_back({one, l1});
    shapes.push_back({one, l2});
    shapes.push_back({two, l2});
    shapes.push_back({one, l3});
    shapes.push_back({two, l3});
  } else {
    shapes.push_back({one, 0});
    shapes.push_back({two, 0});
  }
  return shapes;
}

std::string shapes_text(const std::vector<ProbeShape>& shapes) {
  std::string text;
  for (const ProbeShape& shape : shapes) {
    if (!text.empty()) text += ", ";
    text += "batch " + std::to_string(shape.batch);
    if (shape.seq > 0) text += " seq " + std::to_string(shape.seq);
  }
  return text;
}

int64_t held_experts(const ModelInfo& info, const ModelOptions& options) {
  return options.experts > 0 ? options.experts : info.capabilities.experts;
}

std::string probe_method(const std::string& what, const ProbeModels& models, const ModelInfo& info,
                         const std::vector<ProbeShape>& shapes, const ResolvedBenchmark& b) {
  const std::string where = " at " + shapes_text(shapes) + " on the " + to_string(b.device) +
                            parallelism::probed_slice(b, info);
  if (!models.by_blocks) return what + " of the whole model" + where;
  const std::string blocks = std::to_string(info.capabilities.blocks);
  const int64_t group = info.capabilities.block_period;
  const bool narrowed = models.narrowed;
  const int64_t k = models.width_divisor;
  const std::string width =
      k > 1 ? ", at 1/" + std::to_string(k) + " and 2/" + std::to_string(k) +
                  " of its width (hidden size, MLP width and " +
                  (models.keeps_key_value_heads ? "attention heads; the key/value heads and "
                                                : "heads; ") +
                  "the head width kept)"
            : "";
  const std::string experts = models.experts > 0
                                  ? ", " + std::to_string(models.experts) + " and " +
                                        std::to_string(2 * models.experts) + " of its " +
                                        std::to_string(models.held_experts) + " experts a layer"
                                  : "";
  return what + " of the model with " + std::to_string(group) + " and with " +
         std::to_string(2 * group) + " of its " + blocks + " blocks" + width + experts +
         (narrowed ? " at a vocabulary of " + std::to_string(kProbeVocab) + " tokens, and " +
                         std::to_string(group) + (group == 1 ? " block" : " blocks") + " at " +
                         std::to_string(2 * kProbeVocab) + ","
                   : "") +
         where + ", extended to " + blocks + " blocks" +
         (narrowed ? " and " + std::to_string(info.capabilities.vocab) + " tokens" : "") +
         (models.experts > 0 ? " and " + std::to_string(models.held_experts) + " experts" : "") +
         (k > 1 ? " and widened to its width" : "");
}

void report_probing(const std::vector<ProbeShape>& shapes, size_t index) {
  const ProbeShape& shape = shapes[index];
  report_phase({"probing",
                "batch " + std::to_string(shape.batch) +
                    (shape.seq > 0 ? " x " + std::to_string(shape.seq) + " tokens" : ""),
                static_cast<int>(index) + 1, static_cast<int>(shapes.size())});
}

}  // namespace gpubench
