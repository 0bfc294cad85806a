#include "fit_options.h"

#include <algorithm>

#include "commands.h"
#include "common/byte_size.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/text_table.h"

namespace gpubench::cli {

CLI::App* add_fit_subcommand(CLI::App& app, const std::shared_ptr<FitCommandOptions>& o) {
  CLI::App* cmd = app.add_subcommand("fit", torch_command_description("fit"));
  add_benchmark_options(*cmd, o->settings, kUsedByFit);
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
  cmd->add_option("--task", o->task,
                  "train (a training step's peak) or infer (a generation's: the weights in their "
                  "format, the key/value cache, the prompt's pass; the models that generate text)")
      ->capture_default_str();
  cmd->add_option("--format,-f", o->format,
                  "table (fitted to the terminal: the default there), markdown (the default "
                  "elsewhere), csv (one record per figure) or json")
      ->capture_default_str();
  cmd->add_option("--output,-o", o->output, "Write to this file instead of standard output");
  return cmd;
}

FitSettings checked_fit_settings(const FitCommandOptions& o) {
  const auto& formats = kTableCommandFormats;
  if (!o.format.empty() && std::find(formats.begin(), formats.end(), o.format) == formats.end()) {
    throw UsageError("--format '" + echoed(o.format) + "' is not one of " + join(formats));
  }
  if (o.probe != "auto" && o.probe != "blocks") {
    throw UsageError("--probe '" + echoed(o.probe) + "' is not one of auto, blocks");
  }
  if (o.task != "train" && o.task != "infer") {
    throw UsageError("--task '" + echoed(o.task) + "' is not one of train, infer");
  }
  FitSettings settings;
  settings.request = requested(*o.settings);
  settings.request.task = parse_task(o.task);
  if (settings.request.batch_size == kSearchBatchSize) {
    throw UsageError(
        "fit takes a batch size (a number); it reports the largest that fits per "
        "card, which is what --batch-size max searches for in train");
  }
  if (settings.request.profile) {
    throw UsageError("--profile applies to train and infer; fit measures memory, not op times");
  }
  settings.reserve = parse_byte_size(o.reserve, "--reserve", 0);
  settings.cards = o.memory.empty() ? datasheet_cards() : cards_from_list(o.memory);
  return settings;
}

}  // namespace gpubench::cli
