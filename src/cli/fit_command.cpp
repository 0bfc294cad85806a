// gpubench fit: the peak memory per device of a training recipe, predicted from probes on this
// machine, and for each card whether it fits and the largest batch that would (docs/memory.md).
#include <algorithm>
#include <cstdio>
#include <optional>

#include "benchmark_options.h"
#include "benchmark_to_run.h"
#include "cli/progress_printer.h"
#include "commands.h"
#include "fit_options.h"
#include "launcher/launch.h"
#include "launcher/prediction_subject.h"
#include "reporting/fit_verdicts.h"
#include "settings/benchmark_fields.h"
#include "terminal_width.h"

namespace gpubench::cli {
namespace {

std::string recipe_text(const ResolvedBenchmark& b) {
  std::string text;
  for (const auto& [key, value] : identity_settings(b)) {
    if (key == "device" || key == "threads") continue;
    // LoRA's rank, alpha and targets continue the tuning's "LoRA".
    const bool continues = key.rfind("lora_", 0) == 0;
    text += (text.empty() ? "" : continues ? " " : ", ") + value;
  }
  return text;
}

// Probes narrowed (in width, in experts): a column after the vocabulary with each one's `member`,
// where any differs from the model's own.
template <typename Reading>
void with_narrowing_column(FitReport& report, const std::vector<Reading>& readings,
                           const char* name, int64_t Reading::*member, int64_t unnarrowed) {
  if (std::all_of(readings.begin(), readings.end(),
                  [&](const Reading& r) { return r.*member == unnarrowed; })) {
    return;
  }
  report.probe_columns.insert(report.probe_columns.begin() + 2, name);
  for (size_t i = 0; i < readings.size(); ++i) {
    report.probes[i].insert(report.probes[i].begin() + 2, readings[i].*member);
  }
}

FitReport training_report(const ResolvedBenchmark& resolved, const FitSettings& settings,
                          bool by_blocks) {
  const MemoryFit fit = predict_memory(resolved, by_blocks);
  FitReport report;
  report.batch = resolved.batch_size;
  report.breakdown = fit.breakdown_at(resolved.batch_size);
  report.predicted_peak_bytes = report.breakdown.total();
  report.method = fit.method;
  report.counted = fit.counted;
  report.probe_seconds = fit.probe_seconds;
  report.probe_columns = {
      "blocks",           "vocabulary",           "batch",    "seq", "inputs", "activations",
      "peak above start", "same, gradients kept", "gradients"};
  for (const ProbeReading& p : fit.readings) {
    report.probes.push_back({p.blocks, p.vocab, p.batch, p.seq, p.inputs, p.activations,
                             p.peak_above_start, p.peak_above_start_kept, p.gradients});
  }
  with_narrowing_column(report, fit.readings, "experts", &ProbeReading::experts, 0);
  with_narrowing_column(report, fit.readings, "width divisor", &ProbeReading::width_divisor, 1);
  report.cards = card_verdicts(settings.cards, report.predicted_peak_bytes, settings.reserve,
                               [&fit](int64_t capacity) { return fit.max_batch(capacity); });
  return report;
}

FitReport inference_report(const PredictionSubject& subject, const FitSettings& settings,
                           bool by_blocks) {
  const ResolvedBenchmark& resolved = subject.probed;
  const InferenceMemoryFit fit =
      predict_inference_memory(resolved, by_blocks, subject.counted_weights);
  FitReport report;
  report.task = Task::kInfer;
  report.batch = resolved.batch_size;
  report.context = fit.context();
  report.kv_cache_bytes_per_token = fit.kv_cache_bytes_per_token;
  report.kv_cache_window_bytes_per_token = fit.kv_cache_window_bytes_per_token;
  report.kv_cache_window = fit.kv_cache_window;
  report.breakdown = fit.breakdown_at(report.batch, report.context);
  report.predicted_peak_bytes = report.breakdown.total();
  report.method = fit.method;
  report.probe_seconds = fit.probe_seconds;
  // A model that declares its attention's scores: the prompt's pass outside them, what lives
  // beside them and their measured peak.
  const bool scores = static_cast<bool>(fit.prefill_scores);
  report.probe_columns = {"blocks", "vocabulary", "batch", "prompt", "weights", "key/value cache"};
  if (scores) {
    report.probe_columns.insert(report.probe_columns.end(),
                                {"prompt's pass above them, outside its attention's scores",
                                 "beside the scores", "the scores (measured)"});
  } else {
    report.probe_columns.push_back("prompt's pass above them");
  }
  report.probe_columns.insert(report.probe_columns.end(),
                              {"decode context", "decode step above them"});
  for (const InferenceProbeReading& p : fit.readings) {
    std::vector<int64_t> row{
        p.blocks, p.vocab, p.batch, p.seq, p.weights, p.kv_cache, p.prefill_peak_above};
    if (scores) row.insert(row.end(), {p.prefill_at_scores_above, p.prefill_scores});
    row.insert(row.end(), {p.decode_context, p.decode_peak_above});
    report.probes.push_back(row);
  }
  with_narrowing_column(report, fit.readings, "experts", &InferenceProbeReading::experts, 0);
  with_narrowing_column(report, fit.readings, "width divisor",
                        &InferenceProbeReading::width_divisor, 1);
  report.cards = card_verdicts(
      settings.cards, report.predicted_peak_bytes, settings.reserve,
      [&fit](int64_t capacity) { return fit.max_batch(capacity); },
      [&fit, &report](int64_t capacity) { return fit.max_context(capacity, report.batch); });
  return report;
}

// The asked benchmark, or a stand-in the probes can run where this build or machine cannot run
// a setting (launcher/prediction_subject.h); a benchmark file as it is.
PredictionSubject subject_of(const FitCommandOptions& o, const FitSettings& settings) {
  if (o.settings->benchmark_file.empty()) return resolve_for_prediction(settings.request);
  PredictionSubject subject;
  subject.probed = subject.asked = benchmark_to_run(*o.settings, settings.request, false);
  return subject;
}

int run_fit(const FitCommandOptions& o) {
  const FitSettings settings = checked_fit_settings(o);
  const PredictionSubject subject = subject_of(o, settings);
  const bool by_blocks = o.probe == "blocks";
  // The probes' progress, cleared before the report is written.
  std::optional<ProgressPrinter> progress;
  progress.emplace("fit " + subject.probed.model, "");
  FitReport report = subject.probed.task == Task::kInfer
                         ? inference_report(subject, settings, by_blocks)
                         : training_report(subject.probed, settings, by_blocks);
  report.counted.insert(report.counted.begin(), subject.stand_ins.begin(), subject.stand_ins.end());
  progress.reset();
  report.recipe = recipe_text(subject.asked);
  report.reserve_bytes = settings.reserve;
  const ReadingOutput out = reading_output(o.format, o.output);
  write_output(o.output, render_fit(report, out.format, out.table_width));
  return kExitOk;
}

}  // namespace

void add_fit_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<FitCommandOptions>();
  CLI::App* cmd = add_fit_subcommand(app, o);
  cmd->callback([o, &exit_code] { exit_code = naming_options([&] { return run_fit(*o); }); });
}

}  // namespace gpubench::cli
