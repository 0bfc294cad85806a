#include "infer_options.h"

#include "commands.h"
#include "common/input_limits.h"
#include "settings/benchmark_fields.h"

namespace gpubench::cli {

CLI::App* add_infer_subcommand(CLI::App& app, const std::shared_ptr<InferOptions>& options) {
  CLI::App* cmd = app.add_subcommand("infer", torch_command_description("infer"));
  add_benchmark_options(*cmd, options->settings, kUsedByInfer);
  options->settings->options.at("batch_size")
      ->description(
          "Per-device batch size, or a list such as 1,8,32: one result per batch "
          "(default: the model's)");
  cmd->add_option("--output,-o", options->output,
                  "Result file (.json, one batch size) or directory")
      ->capture_default_str();
  cmd->add_option("--tpot-target-ms", options->tpot_target_ms,
                  "Models that generate text: after the batch list, the largest batch whose time "
                  "per output token meets this at p99 (MLPerf's Llama 2 70B: 40 interactive, 200 "
                  "standard)")
      ->check(number_in_range(0.001, 1e7, false));
  add_results_format_option(*cmd, options->format);
  return cmd;
}

std::vector<int64_t> batch_sizes(const BenchmarkOptions& options) {
  if (options.options.at("batch_size")->count() == 0) return {};
  const std::string& text = options.texts.at("batch_size");
  const BenchmarkField& field = *find_benchmark_field("batch_size");
  std::vector<int64_t> sizes;
  for (const std::string& entry : split_list(text, "--batch-size", "1,8,32")) {
    sizes.push_back(field_value_from_text(field, entry).get<int64_t>());
  }
  return sizes;
}

BenchmarkRequest infer_request(InferOptions& options, const std::vector<int64_t>& sizes) {
  if (!sizes.empty()) options.settings->texts["batch_size"] = std::to_string(sizes.front());
  BenchmarkRequest request = requested(*options.settings);
  request.task = Task::kInfer;
  return request;
}

}  // namespace gpubench::cli
