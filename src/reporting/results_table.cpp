#include "reporting/results_table.h"

#include <set>

#include "common/text_table.h"
#include "reporting/regression.h"
#include "results/statistics.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

// The identity settings the other columns do not show: "seq 128 LoRA r16 alpha 32 q,k,v,o".
std::string setup_of(const ResolvedBenchmark& b) {
  static const std::set<std::string> shown = {"model", "precision",  "device",
                                              "gpus",  "batch_size", "threads"};
  std::string setup;
  for (const auto& [key, text] : identity_settings(b)) {
    if (shown.count(key) == 0) setup += (setup.empty() ? "" : " ") + text;
  }
  return setup.empty() ? "-" : setup;
}

std::string latency_text(const LatencySummary& s) {
  return "p50 " + format_fixed(s.p50, 2) + " ms, p90 " + format_fixed(s.p90, 2) + ", p99 " +
         format_fixed(s.p99, 2) + ", max " + format_fixed(s.max, 2) + " (" +
         std::to_string(s.count) + ")";
}

// Bytes human-sized: "256 bytes" below a KiB, else bytes_text's KiB, MiB or GiB.
std::string sized(int64_t bytes) {
  return bytes < 1024 ? std::to_string(bytes) + " bytes" : bytes_text(bytes);
}

}  // namespace

std::string render_inference_lines(const Result& r) {
  const InferenceMetrics& m = r.metrics.inference;
  if (!m.present || r.status != RunStatus::kOk) return "";
  std::string lines = "latency per request: " + latency_text(m.request_latency_ms) + "\n";
  if (m.kv_cache_bytes > 0) {
    lines += "prefill " + format_fixed(m.prefill_tokens_per_second, 1) + " tokens/sec, decode " +
             format_fixed(m.decode_tokens_per_second, 1) + " tokens/sec\n";
    lines += "time to first token: " + latency_text(m.time_to_first_token_ms) + "\n";
    lines += "time per output token: " + latency_text(m.time_per_output_token_ms) + "\n";
    lines += "key/value cache: " + sized(m.kv_cache_bytes) + " (" +
             sized(m.kv_cache_bytes_per_token) + " per token of a sequence)" +
             (m.kv_cache_reallocated ? ", REALLOCATED during decode" : ", never reallocated") +
             (m.kv_cache_converted_per_step
                  ? ", converted for attention at every decode step (capacity for time)"
                  : "") +
             "\n";
    if (m.weight_bytes_per_decoded_token > 0) {
      lines += "weights read per decoded token: " + sized(m.weight_bytes_per_decoded_token) + "\n";
    }
    if (m.decode_ceiling_tokens_per_second > 0) {
      lines += "decode ceiling: " + format_fixed(m.decode_ceiling_tokens_per_second, 1) +
               " tokens/sec (" + sized(m.bytes_per_decoded_token) + " a token at " +
               format_fixed(m.ceiling_bandwidth_gbs, 1) + " GB/s, " + m.ceiling_bandwidth_source +
               "); reached " + format_fixed(100 * m.decode_ceiling_fraction, 1) + "%\n";
    }
    if (m.kernels_per_decode_step > 0) {
      lines += "kernels a decode step: " + std::to_string(m.kernels_per_decode_step) +
               " (counted in its CUDA graph)\n";
    }
  }

  return lines;
}

std::string render_fp8_line(const Result& r) {
  if (r.metrics.fp8_matmul_flop_share <= 0) return "";
  return "fp8: " + format_fixed(100 * r.metrics.fp8_matmul_flop_share, 1) +
         "% of the products ran in FP8 (" + r.benchmark.fp8_recipe + " scaling)\n";
}

std::string render_noise_line(const Result& r) {
  const std::vector<double>& trials = r.metrics.trials;
  if (r.status != RunStatus::kOk || trials.size() < 2) return "";
  const RegressOptions gate;
  const DetectableSlowdown seen = detectable_slowdown(trials, trials, gate);
  if (!seen.known() || !seen.too_noisy(gate.threshold)) return "";
  return "warning: the trials spread " + format_fixed(100 * coefficient_of_variation(trials), 1) +
         "% (CV): regress against a run like this one has " + seen.note(gate.threshold) +
         " (--repeat)\n";
}

std::string render_results_table(const std::vector<Result>& results, size_t max_width) {
  TextTable table({"model", "precision", "device", "batch", "setup", "throughput",
                   "step ms p50 [p5-p95]", "trials", "status"});
  for (const Result& r : results) {
    const auto& m = r.metrics;
    const bool ok = r.status == RunStatus::kOk;
    std::string trials;
    for (double t : m.trials) trials += (trials.empty() ? "" : " ") + format_fixed(t, 1);
    table.add_row({r.benchmark.model, to_string(r.benchmark.precision),
                   to_string(r.benchmark.device) + " x" + std::to_string(r.benchmark.gpus),
                   std::to_string(r.benchmark.batch_size), setup_of(r.benchmark),
                   ok ? format_fixed(m.throughput, 2) + " " + m.throughput_unit : "-",
                   ok ? format_fixed(m.step_time_ms.median, 1) + " [" +
                            format_fixed(m.step_time_ms.p5, 1) + "-" +
                            format_fixed(m.step_time_ms.p95, 1) + "]"
                      : "-",
                   trials, ok ? "ok" : to_string(r.status) + ": " + r.error});
  }
  return table.render(max_width);
}

std::string render_efficiency_lines(const Result& r) {
  const TelemetryReport& t = r.telemetry;
  std::string line = "telemetry: ";
  if (!t.available) {
    line += "none (" + t.reason + ")";
  } else {
    line += format_fixed(t.mean_power_w, 1) + " W mean over " + std::to_string(t.devices.size()) +
            " device(s), " + format_fixed(t.energy_j, 1) + " J (" + t.energy_source + ")";
    if (t.energy_per_sample_j > 0) {
      line += ", " + format_fixed(t.energy_per_sample_j, 4) + " J/sample";
    }
    if (t.median_sm_clock_mhz > 0) {
      line += ", SM clock median " + format_fixed(t.median_sm_clock_mhz, 0) + " MHz (min " +
              format_fixed(t.min_sm_clock_mhz, 0) + ")";
    }
    if (t.max_temperature_c > 0) line += ", max " + format_fixed(t.max_temperature_c, 0) + " C";
    for (const ThrottleShare& reason : t.throttle_reasons) {
      line += ", " + reason.reason + " " + format_fixed(100 * reason.share, 0) + "%";
    }
    for (const std::string& flag : t.flags) line += "\n  note: " + flag;
  }
  const DatasheetInfo& d = r.datasheet;
  line += "\ndatasheet: ";
  if (!d.matched) {
    line += "unmatched (" + d.reason + ")";
  } else {
    line += d.entry;
    if (r.metrics.achieved_fraction_of_peak > 0) {
      line += ", " + format_fixed(100 * r.metrics.achieved_fraction_of_peak, 1) + "% of the " +
              d.peak_quantity + " peak (" + format_fixed(d.peak_tflops, 1) + " per device)";
    }
  }
  return line + "\n";
}

std::string render_batch_search(const BatchSearchInfo& search) {
  if (!search.searched) return "";
  TextTable table({"batch", "outcome", "peak", "why"});
  for (const BatchProbe& probe : search.probes) {
    table.add_row({std::to_string(probe.batch), probe.outcome,
                   probe.peak_bytes > 0 ? bytes_text(probe.peak_bytes) : "-",
                   !probe.oom_cause.empty() ? probe.oom_cause
                   : probe.error.empty()    ? "-"
                                            : probe.error});
  }
  return "batch search under " + bytes_text(search.memory_limit_bytes) + " (" +
         search.memory_limit_source +
         (search.memory_limit_caps.empty() ? "" : "; it caps " + search.memory_limit_caps) +
         "), from fit's " + std::to_string(search.predicted_batch) + ":\n" + table.render() +
         "found: batch " + std::to_string(search.found_batch) + "\n\n";
}

}  // namespace gpubench
