// gpubench models: the registry with counted parameters and FLOPs.
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/progress_printer.h"
#include "commands.h"
#include "common/json_text.h"
#include "common/phase_progress.h"
#include "common/text_table.h"
#include "modeling/model_registry.h"
#include "terminal_width.h"

namespace gpubench::cli {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out;
  for (int64_t d : shape) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

}  // namespace

void add_models_command(CLI::App& app, int& exit_code) {
  auto format = std::make_shared<std::string>("table");
  auto names = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("models", torch_command_description("models"));
  cmd->add_option("names", *names, "Only these models (default: all)");
  cmd->add_option("--format,-f", *format, "table (for the terminal), markdown, csv or json")
      ->check(CLI::IsMember(kTableCommandFormats))
      ->capture_default_str();
  cmd->callback([format, names, &exit_code] {
    std::vector<const ModelInfo*> models;
    for (const std::string& name : *names) models.push_back(&ModelRegistry::instance().get(name));
    if (names->empty()) models = ModelRegistry::instance().all();
    nlohmann::json list = nlohmann::json::array();
    TextTable table({"name", "family", "task", "input", "params", "active params",
                     "forward GFLOPs/sample", "default batch", "reference"});
    std::optional<ProgressPrinter> progress;  // counting builds the models: up to a minute
    progress.emplace("models", "");
    for (size_t i = 0; i < models.size(); ++i) {
      const ModelInfo* info = models[i];
      report_phase(
          {"counting", info->name, static_cast<int>(i) + 1, static_cast<int>(models.size())});
      const ModelStats stats = listed_counts(*info);
      list.push_back({{"name", info->name},
                      {"aliases", info->aliases},
                      {"family", info->family},
                      {"task", info->task},
                      {"input_shape", info->input_shape},
                      {"params", stats.params},
                      {"trainable_params", stats.trainable_params},
                      {"active_params", stats.computed_params()},
                      {"forward_flops", stats.forward_flops},
                      {"default_batch_size", info->default_batch_size},
                      {"sample_unit", info->sample_unit},
                      {"reference", info->reference}});
      table.add_row({info->name, info->family, info->task, shape_text(info->input_shape),
                     std::to_string(stats.params), stats.computed_params_text(),
                     format_fixed(stats.forward_flops / 1e9, 3),
                     std::to_string(info->default_batch_size), info->reference});
    }
    progress.reset();
    // On a terminal, parts of as many columns as fit with their words whole, each with the name.
    const std::string text = *format == "json"    ? json_text(list) + "\n"
                             : *format == "table" ? table.render_in_parts(table_width(), 1)
                                                  : table.render_as(*format, table_width());
    std::fputs(text.c_str(), stdout);
    exit_code = kExitOk;
  });
}

}  // namespace gpubench::cli
