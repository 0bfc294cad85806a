// gpubench fit: the peak memory per device of a training recipe, predicted from probes on this
// machine, and for each card whether it fits and the largest batch that would (docs/memory.md).
#include <cstdio>

#include "benchmark_options.h"
#include "benchmark_to_run.h"
#include "commands.h"
#include "common/byte_size.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "reporting/fit_verdicts.h"
#include "runner/runner.h"
#include "spec/benchmark_fields.h"

namespace gpubench::cli {
namespace {

struct FitCommandOptions {
  std::shared_ptr<BenchmarkOptions> settings = std::make_shared<BenchmarkOptions>();
  std::string memory;
  std::string reserve = "1GiB";
  std::string format = "markdown";
  std::string probe = "auto";
  std::string output;
};

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

int run_fit(const FitCommandOptions& o) {
  if (o.format != "markdown" && o.format != "json") {
    throw UsageError("--format '" + echoed(o.format) + "' is not one of markdown, json");
  }
  if (o.probe != "auto" && o.probe != "blocks") {
    throw UsageError("--probe '" + echoed(o.probe) + "' is not one of auto, blocks");
  }
  const BenchmarkRequest request = requested(*o.settings);
  if (request.batch_size == kSearchBatchSize) {
    throw UsageError(
        "fit takes a batch size (a number); it reports the largest that fits per "
        "card, which is what --batch-size max searches for in train");
  }
  if (request.profile) {
    throw UsageError("--profile applies to train and infer; fit measures memory, not op times");
  }
  const int64_t reserve = parse_byte_size(o.reserve, "--reserve", 0);
  const std::vector<CardMemory> cards =
      o.memory.empty() ? datasheet_cards() : cards_from_list(o.memory);
  const ResolvedBenchmark resolved = benchmark_to_run(*o.settings, request, false);
  const MemoryFit fit = predict_memory(resolved, o.probe == "blocks");

  FitReport report;
  report.recipe = recipe_text(resolved);
  report.batch = resolved.batch_size;
  report.breakdown = fit.breakdown_at(resolved.batch_size);
  report.predicted_peak_bytes = report.breakdown.total();
  report.reserve_bytes = reserve;
  report.method = fit.method;
  report.probe_seconds = fit.probe_seconds;
  for (const ProbeReading& p : fit.readings) {
    report.probes.push_back({p.blocks, p.vocab, p.batch, p.seq, p.inputs, p.activations,
                             p.peak_above_start, p.peak_above_start_kept, p.gradients});
  }
  report.cards = card_verdicts(cards, report.predicted_peak_bytes, reserve,
                               [&fit](int64_t capacity) { return fit.max_batch(capacity); });
  write_output(o.output, o.format == "json" ? json_text(fit_report_to_json(report)) + "\n"
                                            : render_fit_markdown(report));
  return kExitOk;
}

}  // namespace

void add_fit_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<FitCommandOptions>();
  CLI::App* cmd = app.add_subcommand("fit", torch_command_description("fit"));
  add_benchmark_options(*cmd, o->settings);
  cmd->add_option("--memory", o->memory,
                  "Cards to judge, as sizes: 48GB,80GB (default: every card of the datasheet "
                  "database)")
      ->check(not_empty("give sizes such as 48GB,80GB, or leave the option out for every card"));
  cmd->add_option("--reserve", o->reserve,
                  "Memory kept free on every card for what the allocator does not count (CUDA "
                  "context, library workspaces)")
      ->capture_default_str();
  cmd->add_option("--probe", o->probe,
                  "auto (the whole model where it fits here, else 1 and 2 of its blocks) or "
                  "blocks")
      ->capture_default_str();
  cmd->add_option("--format,-f", o->format, "markdown or json")->capture_default_str();
  cmd->add_option("--output,-o", o->output, "Write to this file instead of standard output");
  cmd->callback([o, &exit_code] { exit_code = run_fit(*o); });
}

}  // namespace gpubench::cli
