// gpubench infer's workloads (docs/inference.md): forward passes of a batch (throughput from
// device-synchronised windows, as training measures steps; latency per request, each
// synchronised) and, for the models that generate text, greedy generation with a preallocated
// key/value cache (prefill and decode rates, time to first token, time per output token). Half
// precision as inference engines run it: the weights themselves in fp16 or bf16, no autocast;
// fp32 and tf32 as in training; fp8 the linear layers' weights quantised once to e4m3, the
// rest in bf16 (docs/fp8.md).
#include <numeric>

#include <torch/torch.h>

#include "infer/greedy_generation.h"

#include "common/errors.h"
#include "distributed/collectives.h"
#include "features/parallelism/model_parallelism.h"
#include "infer/inference_model.h"
#include "infer/request_timing.h"
#include "infer/static_decode.h"
#include "memory/run_memory.h"
#include "memory/tensor_memory.h"
#include "modeling/flop_counter.h"
#include "results/statistics.h"
#include "run/model_parallel_wait.h"
#include "run/run_session.h"
#include "system/memory_bandwidth.h"
#include "torch_support/captured_graph.h"

namespace gpubench {
namespace {

// What both inference workloads share: the model in its weights' dtype, in eval and inference
// mode; the memory as weights, the key/value cache (other) and the rest of the peak, the
// forward pass's transient tensors (activations).
class InferenceWorkload : public Workload {
 public:
  bool trains() const override { return false; }

  WorkloadDescription describe(const RunSession&) override {
    return {std::string(), "", true};  // no optimiser; the inference block
  }

  // A model counted from its configuration is built on the host in its weights' dtype, then
  // placed: refused before anything is allocated where the host or the device cannot hold them
  // (llama-3.1-405b or gpt-oss-120b on a 24 GB host grew past 6 GB and ended in the allocator's
  // own words).
  void check_counted(RunSession& session, const ModelStats&) override {
    const std::optional<int64_t> host = session.host_memory();
    if (!host) return;
    const ResolvedBenchmark& spec = session.benchmark();
    MemoryReport planned;
    planned.basis = kMemoryPlanned;
    // One rank's: its slice, or its share of the experts.
    planned.breakdown.weights = parallelism::rank_bytes(
        spec, session.info(), session.model_options(), [&](const ModelOptions& options) {
          return planned_weight_bytes(session.info(), options, spec);
        });
    planned.peak_bytes = planned.breakdown.total();
    planned.peak_source = "planned before the run: the weights counted from the configuration";
    const std::string weights = bytes_text(planned.breakdown.weights) + " of weights in " +
                                to_string(spec.precision) +
                                (spec.weights == "mxfp4" ? " (the experts in MXFP4)" : "");
    if (planned.breakdown.weights > *host) {
      throw OutOfMemoryBeforeRun("out of memory before the run: " + spec.model +
                                     " is built on the host, " + weights + ", and the host has " +
                                     bytes_text(*host) + " available",
                                 planned);
    }
    const torch::Device device = session.device();
    if (!device.is_cuda()) return;
    const int64_t gpu = tensor_memory::device_total_bytes(device);
    if (planned.breakdown.weights > gpu) {
      throw OutOfMemoryBeforeRun("out of memory before the run: " + spec.model + " needs " +
                                     weights +
                                     " on the GPU before any is quantised, and the GPU "
                                     "has " +
                                     bytes_text(gpu),
                                 planned);
    }
  }

  // Models counted from their configuration are built in the weights' dtype and drawn on the
  // device; the others are counted on an instance in float32 first.
  WorkloadCounts counts(RunSession&, const ModelStats& stats) override {
    return {stats.forward_flops, 0};
  }

  WorkloadFigures figures(RunSession& session, const Measurement&) override {
    WorkloadFigures figures;
    figures.metrics = metrics_;
    if (session.benchmark().precision == Precision::kFp8) {
      figures.metrics.fp8_matmul_flop_share = counts_.fp8_forward_share();
      require_fp8_products(session.benchmark().model, counts_.fp8_forward_share());
    }
    return figures;
  }

  WorkloadDescription prepare(RunSession& session) override {
    TrainableModel& model = *session.model();
    dtype_ = inference_weight_dtype(session.benchmark().precision);
    prepare_for_inference(model, session.benchmark(), session.policy());
    weights_ = inference_weight_bytes(model.module());
    inference_mode_.emplace();
    return {};
  }

  MemoryReport memory_breakdown(RunSession& session) override {
    const torch::Device device = session.device();
    const int64_t kv_cache = metrics_.inference.kv_cache_bytes;
    MemoryBreakdown parts;
    parts.weights = weights_;
    const int64_t peak = tensor_memory::peak_allocated_bytes(device);
    parts.activations = std::max<int64_t>(0, peak - weights_ - kv_cache);
    return memory_report(device, kMemoryMeasured, peak, parts);
  }

  std::optional<MemoryReport> memory_at_failure(RunSession& session) override {
    MemoryBreakdown parts;
    parts.weights = weights_;
    return memory_report(session.device(), kMemoryAtFailure,
                         tensor_memory::peak_allocated_bytes(session.device()), parts);
  }

 protected:
  // Runs `work` with its products counted (what ran in FP8, the weights read).
  template <typename Work>
  void counted(Work&& work) {
    FlopCounter counter;
    work();
    counts_ += counter.counts();
  }

  std::optional<torch::ScalarType> dtype_;
  FlopCounts counts_;
  Metrics metrics_;  // the figures gathered as it runs (Workload::figures)

 private:
  int64_t weights_ = 0;
  std::optional<c10::InferenceMode> inference_mode_;
};

struct Forward {
  TrainableModel& model;
  SyntheticBatch batch;
  void operator()() const { model.inference_output(batch); }
};

// Forward passes of the batch: throughput trials, then one request per timed pass.
class ForwardWorkload : public InferenceWorkload {
 public:
  TrialPlan start(RunSession& session) override {
    const ResolvedBenchmark& spec = session.benchmark();
    TrainableModel& model = *session.model();
    SyntheticBatch batch =
        model.synthetic_batch(spec.batch_size, session.device(), spec.channels_last);
    if (dtype_ && batch.inputs.is_floating_point()) batch.inputs = batch.inputs.to(*dtype_);
    forward_ = Forward{model, batch};
    int warmup = spec.warmup_steps;
    if (spec.mode == Mode::kGraph) {  // the warm-up runs before the capture, inside
      counted([&] {
        graph_ = std::make_unique<CapturedGraph>(forward_, session.device(), std::max(1, warmup));
      });
      metrics_.graph_capture_ms = graph_->capture_ms();
      forward_ = [this] { graph_->replay(); };
      warmup = 0;
    }
    // Replicas (--gpus N) each serve their batch; the timer's windows close on every rank.
    return {
        warmup, spec.steps, spec.repeat,
        static_cast<double>(spec.batch_size * model.samples_per_item() * session.replica_count())};
  }

  void step() override { counted(forward_); }

  Measurement measure(RunSession& session, const TrialPlan& plan, StepTimer& timer,
                      const MeasurementHooks& hooks) override {
    const Measurement measured = Workload::measure(session, plan, timer, hooks);
    const ResolvedBenchmark& spec = session.benchmark();
    metrics_.inference.request_latency_ms =
        summarize_latency(time_requests(timer, spec.steps * spec.repeat, forward_));
    return measured;
  }

  WorkloadFigures figures(RunSession& session, const Measurement& measured) override {
    WorkloadFigures figures = InferenceWorkload::figures(session, measured);
    TrainableModel& model = *session.model();
    Metrics& metrics = figures.metrics;
    if (model.tokens_per_item() > 0) {
      metrics.sequences_per_second = measured.throughput;
      metrics.tokens_per_second =
          measured.throughput * static_cast<double>(model.tokens_per_item());
    }
    metrics.achieved_tflops =
        static_cast<double>(session.result().metrics.forward_flops_per_sample) *
        measured.throughput / 1e12;
    return figures;
  }

 private:
  std::function<void()> forward_;
  std::unique_ptr<CapturedGraph> graph_;
};

// Greedy generations: `warmup_steps` untimed, then `repeat` trials of `steps` generations. A
// trial's throughput is its decode tokens over its decode time. Graph mode: each decode step a
// replay of one captured step.
class GenerateWorkload : public InferenceWorkload {
 public:
  // The key/value cache for batch x (prompt + generated) tokens, from one position's, against
  // what the device (the host for a CPU run) has left beside the weights: refused before it is
  // allocated.
  void refuse_a_cache_that_cannot_fit(RunSession& session, torch::ScalarType cache_dtype) {
    const ResolvedBenchmark& spec = session.benchmark();
    const int64_t context = spec.prompt_len + spec.gen_len;
    const int64_t cache =
        generator_->allocate_cache(1, 1, device_, cache_dtype).bytes_at(context) * spec.batch_size;
    const int64_t in_use = tensor_memory::allocated_bytes(device_);
    std::optional<int64_t> capacity;
    if (device_.is_cuda()) {
      capacity = tensor_memory::device_total_bytes(device_);
    } else if (session.run_setup().host_memory_available) {  // before the weights took theirs
      capacity = session.run_setup().host_memory_available;
    } else if (const std::optional<int64_t> host = host_available_memory()) {
      capacity = *host + in_use;
    }
    if (!capacity || in_use + cache <= *capacity) return;
    MemoryReport planned;
    planned.basis = kMemoryPlanned;
    planned.breakdown.weights = in_use;
    planned.breakdown.other = cache;
    planned.peak_bytes = planned.breakdown.total();
    planned.peak_source = "planned before the run: the weights as placed, the cache counted";
    throw OutOfMemoryBeforeRun(
        "out of memory before the run: " + spec.model + " holds " + bytes_text(in_use) +
            " of weights and needs " + bytes_text(cache) + " of key/value cache for batch " +
            std::to_string(spec.batch_size) + " x " + std::to_string(context) +
            " tokens, and the " + (device_.is_cuda() ? "GPU has " : "host has ") +
            bytes_text(*capacity) +
            " (a smaller batch, a shorter context or --kv-cache fp8 needs less)",
        planned);
  }

  TrialPlan start(RunSession& session) override {
    const ResolvedBenchmark& spec = session.benchmark();
    device_ = session.device();
    rank_ = &session.rank();
    gen_len_ = spec.gen_len;
    generator_ = session.model()->text_generator();
    if (!generator_) throw std::logic_error(spec.model + " generates text but has no generator");
    const torch::ScalarType cache_dtype = kv_cache_dtype(spec);
    refuse_a_cache_that_cannot_fit(session, cache_dtype);
    cache_.emplace(generator_->allocate_cache(spec.batch_size, spec.prompt_len + spec.gen_len,
                                              device_, cache_dtype));
    InferenceMetrics& inference = metrics_.inference;
    inference.kv_cache_bytes = cache_->bytes();
    inference.kv_cache_bytes_per_token = cache_->bytes_per_token();
    inference.kv_cache_converted_per_step =
        generator_->decode_converts_cache(device_, cache_dtype, dtype_.value_or(torch::kFloat));
    prompt_ = torch::randint(generator_->vocab_size(), {spec.batch_size, spec.prompt_len},
                             torch::TensorOptions().device(device_).dtype(torch::kLong));
    // One eager generation, counted: a prompt pass and gen_len - 1 decode steps, each reading
    // every weight once (graph mode's replays run no host code to count).
    counted([&] { generate_greedy(*generator_, *cache_, prompt_, gen_len_, device_, nullptr); });
    inference.weight_bytes_per_decoded_token =
        counts_.weight_bytes_read / (spec.gen_len * spec.batch_size);
    // Each sequence's decode steps read its cache from prompt_len + 1 to prompt_len + gen_len - 1
    // tokens long: prompt_len + gen_len / 2 on average (a sliding-window layer's, at most its
    // window).
    inference.bytes_per_decoded_token = inference.weight_bytes_per_decoded_token +
                                        cache_->bytes_at(spec.prompt_len + (spec.gen_len + 1) / 2);
    if (spec.mode == Mode::kGraph) {
      graphed_ =
          std::make_unique<StaticDecode>(*generator_, *cache_, spec.batch_size, device_, true);
      metrics_.graph_capture_ms = graphed_->capture_ms();
      inference.kernels_per_decode_step = std::max<int64_t>(0, graphed_->kernels_per_step());
    }
    // One replica's: each rank's decode rate is summed over the ranks (measure).
    const double decoded_per_generation =
        static_cast<double>(spec.batch_size) * static_cast<double>(spec.gen_len - 1);
    return {spec.warmup_steps, spec.steps, spec.repeat, decoded_per_generation};
  }

  // The CPU's bandwidth for the decode ceiling, measured before the model's peak is tracked and
  // outside --memory-limit (its arrays are not the run's).
  WorkloadDescription prepare(RunSession& session) override {
    if (session.device().is_cpu()) {
      tensor_memory::set_limit(session.device(), 0);
      cpu_memory_bandwidth_gbs_ = measure_copy_bandwidth_gbs();
      tensor_memory::set_limit(session.device(), session.benchmark().memory_limit);
    }
    return InferenceWorkload::prepare(session);
  }

  // Under tensor parallelism the prompt pass's collectives are kept apart from the decode's.
  void step() override {
    const RankPlacement& rank = *rank_;
    take_model_parallel_wait(rank, device_);  // not a generation's
    last_ = generate_greedy(*generator_, *cache_, prompt_, gen_len_, device_, graphed_.get(),
                            [&] { prefill_waited_ += take_model_parallel_wait(rank, device_); });
    decode_waited_ += take_model_parallel_wait(rank, device_);
  }

  Measurement measure(RunSession& session, const TrialPlan& plan, StepTimer&,
                      const MeasurementHooks& hooks) override {
    for (int i = 0; i < plan.warmup_steps; ++i) {
      throw_if_interrupted();
      step();
      if (hooks.progress) hooks.progress({true, 0, plan.repeat, i + 1, plan.warmup_steps, 0});
    }
    if (hooks.before_first_timed_step) hooks.before_first_timed_step();
    prefill_waited_ = decode_waited_ = {};
    const double prompt_tokens = static_cast<double>(session.benchmark().batch_size) *
                                 static_cast<double>(session.benchmark().prompt_len);
    InferenceMetrics& inference = metrics_.inference;
    std::vector<double> requests, first_tokens, steps, prefill_rates;
    Measurement measured;
    for (int trial = 1; trial <= plan.repeat; ++trial) {
      if (hooks.window_opened) hooks.window_opened();
      double decode_ms = 0;
      for (int i = 1; i <= plan.steps; ++i) {
        throw_if_interrupted();
        step();
        inference.kv_cache_reallocated |= last_.cache_reallocated;
        requests.push_back(last_.total_ms);
        first_tokens.push_back(last_.time_to_first_token_ms);
        prefill_rates.push_back(prompt_tokens / (last_.time_to_first_token_ms / 1e3));
        steps.insert(steps.end(), last_.decode_step_ms.begin(), last_.decode_step_ms.end());
        decode_ms += std::accumulate(last_.decode_step_ms.begin(), last_.decode_step_ms.end(), 0.0);
        if (hooks.progress && i < plan.steps) {
          hooks.progress({false, trial, plan.repeat, i, plan.steps,
                          decode_ms > 0 ? plan.samples_per_step * i / (decode_ms / 1e3) : 0});
        }
      }
      if (hooks.window_closed) hooks.window_closed();
      // Replicas generate on their own: the run's rate is the sum of theirs (the mean of a
      // replica's tensor-parallel ranks, which generate together).
      double rate = plan.samples_per_step * plan.steps / (decode_ms / 1e3);
      if (Collectives* ranks = session.rank().collectives) {
        rate = ranks->sum_over_ranks(rate) / session.benchmark().tensor_parallel;
      }
      measured.trials.push_back(rate);
      if (hooks.progress) hooks.progress({false, trial, plan.repeat, plan.steps, plan.steps, rate});
    }
    measured.throughput = median(measured.trials);
    measured.step_time_ms = summarize(steps);
    inference.prefill_tokens_per_second = median(prefill_rates);
    inference.request_latency_ms = summarize_latency(requests);
    inference.time_to_first_token_ms = summarize_latency(first_tokens);
    inference.time_per_output_token_ms = summarize_latency(steps);
    const RankPlacement& rank = session.rank();
    decode_wait_ =
        per_step_on_slowest_rank(rank, decode_waited_, static_cast<int64_t>(steps.size()));
    prefill_wait_ =
        per_step_on_slowest_rank(rank, prefill_waited_, int64_t{plan.steps} * plan.repeat);
    return measured;
  }

  WorkloadFigures figures(RunSession& session, const Measurement& measured) override {
    WorkloadFigures figures = InferenceWorkload::figures(session, measured);
    figures.metrics.tokens_per_second = measured.throughput;
    figures.metrics.inference.decode_tokens_per_second = measured.throughput;
    figures.cpu_memory_bandwidth_gbs = cpu_memory_bandwidth_gbs_;
    if (session.rank().model_parallel) {
      figures.model_parallel_wait =
          parallelism::GroupWait{decode_wait_.ms, prefill_wait_.ms, decode_wait_.collectives};
    }
    return figures;
  }

 private:
  torch::Device device_ = torch::kCPU;
  int64_t gen_len_ = 0;
  TextGenerator* generator_ = nullptr;
  std::optional<KvCache> cache_;
  torch::Tensor prompt_;
  std::unique_ptr<StaticDecode> graphed_;
  Generation last_;
  double cpu_memory_bandwidth_gbs_ = 0;
  const RankPlacement* rank_ = nullptr;
  ModelParallelCollectives::Waited prefill_waited_, decode_waited_;
  ModelParallelWait prefill_wait_, decode_wait_;
};

const WorkloadRegistration kForwardWorkload{
    {"infer-forward", "forward passes of a synthetic batch (gpubench infer)",
     [](const ResolvedBenchmark& benchmark, const ModelInfo& info) {
       return benchmark.task == Task::kInfer && !info.capabilities.generates;
     },
     [] { return std::make_unique<ForwardWorkload>(); }}};

const WorkloadRegistration kGenerateWorkload{
    {"generate", "greedy text generation with a key/value cache (gpubench infer, LLMs)",
     [](const ResolvedBenchmark& benchmark, const ModelInfo& info) {
       return benchmark.task == Task::kInfer && info.capabilities.generates;
     },
     [] { return std::make_unique<GenerateWorkload>(); }}};

}  // namespace
}  // namespace gpubench
