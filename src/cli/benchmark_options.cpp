#include "benchmark_options.h"

#include <cctype>

#include "commands.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/text_table.h"
#include "settings/benchmark_fields.h"

namespace gpubench::cli {
namespace {

std::string help_of(const BenchmarkField& field) {
  return field.default_text.empty() ? field.help
                                    : field.help + " (default: " + field.default_text + ")";
}

// What the help shows after the option's name: INT, SIZE, {eager,graph}, ...
std::string type_of(const BenchmarkField& field) {
  switch (field.type) {
    case FieldType::kChoice:
      return "{" + join(field.choices, ",") + "}";
    case FieldType::kByteSize:
      return "SIZE";
    case FieldType::kInteger: {
      std::string type = "INT";
      for (const auto& [word, value] : field.named_values) type += "|" + word;
      return type;
    }
    case FieldType::kText:
    case FieldType::kFlag:
      break;
  }
  return "TEXT";
}

// The help's group: the setting's section ("Fine-tuning options"); none (hidden) where the
// command does not use it.
std::string group_of(const BenchmarkField& field, CommandUse use) {
  if (!field.shown_by(use)) return "";
  std::string name = section_info(field.section).name;
  name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return name + " options";
}

}  // namespace

void add_benchmark_options(CLI::App& command, const std::shared_ptr<BenchmarkOptions>& options,
                           CommandUse use) {
  for (const BenchmarkField& field : benchmark_fields()) {
    if (!field.command_line) continue;
    const std::string group = group_of(field, use);
    if (field.type == FieldType::kFlag) {
      const std::string key = field.key;
      options->flags[key] = std::nullopt;
      command
          .add_flag_callback(
              field.long_flag(), [options, key] { options->flags[key] = true; }, help_of(field))
          ->group(group);
      command
          .add_flag_callback(
              "--no-" + field.long_flag().substr(2),
              [options, key] { options->flags[key] = false; }, "Turn off: " + field.help)
          ->group(group);
      continue;
    }
    const std::string names =
        field.long_flag() + (field.short_flag.empty() ? "" : "," + field.short_flag);
    options->options[field.key] =
        command.add_option(names, options->texts[field.key], help_of(field))
            ->type_name(type_of(field))
            ->group(group);
  }
  command
      .add_option("--benchmark-file", options->benchmark_file,
                  "A resolved benchmark (gpubench.benchmark/1 JSON), as `run` and the rank "
                  "launcher hand to their children; takes no other benchmark option")
      ->check(not_empty("name a benchmark file"));
}

std::string with_option_names(const std::string& message) {
  const auto is_word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  std::string named;
  size_t i = 0;
  while (i < message.size()) {
    if (!is_word_char(message[i])) {
      named += message[i++];
      continue;
    }
    size_t end = i;
    while (end < message.size() && is_word_char(message[end])) ++end;
    const std::string word = message.substr(i, end - i);
    // A word holds no '-', so find_benchmark_field matches its key exactly.
    const BenchmarkField* field =
        word.find('_') != std::string::npos || i == 0 ? find_benchmark_field(word) : nullptr;
    const bool after_dash = i > 0 && message[i - 1] == '-';
    named += field != nullptr && field->command_line && !after_dash ? field->long_flag() : word;
    i = end;
  }
  return named;
}

BenchmarkRequest requested(const BenchmarkOptions& options) {
  BenchmarkRequest request;
  for (const BenchmarkField& field : benchmark_fields()) {
    if (!field.command_line) continue;
    if (field.type == FieldType::kFlag) {
      if (const auto flag = options.flags.at(field.key)) field.request(request, *flag);
    } else if (options.options.at(field.key)->count() > 0) {
      field.request(request, field_value_from_text(field, options.texts.at(field.key)));
    }
  }
  return request;
}

bool any_setting_given(const BenchmarkOptions& options) {
  for (const auto& [key, option] : options.options) {
    if (option->count() > 0) return true;
  }
  for (const auto& [key, flag] : options.flags) {
    if (flag) return true;
  }
  return false;
}

void add_results_format_option(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format,-f", format,
                 "How the results print on standard output: table (the results table and each "
                 "run's lines), or markdown, csv (one record per figure) or json as `gpubench "
                 "report` renders the same results; the result files are written either way")
      ->check(CLI::IsMember(kTableCommandFormats))
      ->capture_default_str();
}

CLI::App* add_train_subcommand(CLI::App& app, const std::shared_ptr<TrainOptions>& options) {
  CLI::App* cmd = app.add_subcommand("train", torch_command_description("train"));
  add_benchmark_options(*cmd, options->settings, kUsedByTrain);
  cmd->add_option("--output,-o", options->output, "Result file (.json) or directory")
      ->capture_default_str();
  add_results_format_option(*cmd, options->format);
  return cmd;
}

}  // namespace gpubench::cli
