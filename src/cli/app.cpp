#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/atomic_file.h"
#include "common/closest_name.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/log.h"
#include "common/standard_streams.h"
#include "gpubench/build_info.h"
#include "help_formatter.h"
#include "terminal_width.h"

namespace gpubench::cli {
namespace {

// CLI11 reports a mistyped subcommand as "a subcommand is required"; name it instead.
std::string unknown_subcommand(const CLI::App& app, const std::string& name) {
  if (name.empty()) return "";
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return "";
    if (!sub->get_group().empty()) names.push_back(sub->get_name());  // hidden: no group
  }
  return "unknown subcommand '" + echoed(name) + "';" + did_you_mean(name, names) +
         " known: " + join(names);
}

// CLI11 reports an option a command does not take as an argument "not expected", the value
// beside it too; name the option, and the nearest one the command takes. "" where the extras are
// no option.
std::string unknown_option(const CLI::App& app, int argc, char** argv) {
  std::vector<const CLI::App*> commands = {&app};
  for (const CLI::App* sub : app.get_subcommands()) commands.push_back(sub);
  std::vector<std::string> known;
  for (const CLI::App* command : commands) {
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : option->get_lnames()) known.push_back("--" + name);
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string command = commands.size() > 1 ? " " + commands.back()->get_name() : "";
    return "unknown option '" + echoed(name) + "' for gpubench" + command + ";" +
           did_you_mean(name, known) + " see gpubench" + command + " --help";
  }
  return "";
}

}  // namespace

void add_torch_free_commands(CLI::App& app, int& exit_code) {
  add_report_command(app, exit_code);
  add_compare_command(app, exit_code);
  add_regress_command(app, exit_code);
  add_trend_command(app, exit_code);
  add_scale_command(app, exit_code);
  add_specs_command(app, exit_code);
}

CLI::Validator number_in_range(double min, double max, bool integer) {
  const auto text_of = [](double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.10g", value);
    return std::string(text);
  };
  const std::string rule = std::string(integer ? "an integer" : "a finite number") + " from " +
                           text_of(min) + " to " + text_of(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::string refused = "must be " + rule + ", got '" + echoed(text) + "'";
        // An integer in plain decimal, as every other option takes it: not "1e3", and "010" is
        // ten (CLI11 alone would read it as octal eight), handed on as "10".
        if (integer) {
          const bool decimal =
              !text.empty() && text.size() <= 18 &&
              text.find_first_not_of("0123456789", text[0] == '-') == std::string::npos &&
              text != "-";
          if (!decimal) return refused;
          const long long value = std::stoll(text);
          if (value < min || value > max) return refused;
          text = std::to_string(value);
          return "";
        }
        // A number in decimal: not hexadecimal ("0x10" is not 16), no spaces, no "inf".
        if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) {
          return refused;
        }
        size_t used = 0;
        double value = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        const bool valid =
            used > 0 && used == text.size() && std::isfinite(value) && value >= min && value <= max;
        return valid ? "" : refused;
      },
      "NUMBER in [" + text_of(min) + ", " + text_of(max) + "]");
}

CLI::Validator not_empty(const std::string& what_to_give) {
  return CLI::Validator(
      [what_to_give](const std::string& text) {
        return text.empty() ? "must not be empty: " + what_to_give : std::string();
      },
      "");
}

std::vector<int> integer_list(const std::string& text, const std::string& option, int min, int max,
                              const std::string& example) {
  const CLI::Validator check = number_in_range(min, max);
  std::vector<int> values;
  for (std::string entry : split_list(text, option, example)) {
    if (const std::string why = check(entry); !why.empty()) {
      throw UsageError(option + " '" + echoed(text) + "': an entry " + why);
    }
    const int value = std::stoi(entry);
    if (std::find(values.begin(), values.end(), value) != values.end()) {
      throw UsageError(option + " '" + echoed(text) + "' gives " + entry +
                       " twice; give each value once, such as " + example);
    }
    values.push_back(value);
  }
  return values;
}

std::string torch_command_description(const std::string& name) {
  for (const TorchCommand& command : kTorchCommands) {
    if (name == command.name) return command.description;
  }
  return "";
}

int usage_error(const std::string& message) {
  // The last guard for a value echoed raw somewhere: one line, no control character, cut.
  std::fprintf(stderr, "gpubench: error: %s\n", echoed(message, kMaxErrorLineChars).c_str());
  return kExitUsage;
}

int with_output_checked(int exit_code) {
  if (const std::string failure = standard_output_failure(); !failure.empty()) {
    return usage_error("cannot write to standard output: " + failure);
  }
  return exit_code;
}

void end_process(int exit_code) {
  exit_code = with_output_checked(exit_code);
  std::fflush(nullptr);
  std::_Exit(exit_code);
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty()) {
    write_standard_output(text);
  } else {
    write_text_atomically(path, text);
  }
}

std::string named_subcommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--log-level") {
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    return arg;
  }
  return "";
}

namespace {

// Ends the process by the signal that interrupted it, as it would have ended without a handler,
// once the destructors on the way here have cleaned up.
[[noreturn]] void die_by(int signal_number) {
  std::fflush(nullptr);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
  std::_Exit(128 + signal_number);
}

// A CLI11 message quotes the argument; it may be as long as the command line.
constexpr size_t kMaxParserMessageChars = 240;

}  // namespace

std::unique_ptr<CLI::App> new_app(GlobalOptions& global, const CommandRegistration& add_commands,
                                  int& exit_code) {
  auto app = std::make_unique<CLI::App>(
      "gpubench: deep-learning training throughput on GPUs (and CPUs)", "gpubench");
  // Before the subcommands: each takes its parent's formatter as it is added.
  app->formatter(std::make_shared<WrappingFormatter>(help_width()));
  app->set_version_flag("--version", std::string(GPUBENCH_VERSION) + " (" GPUBENCH_GIT_COMMIT ")");
  app->require_subcommand(1);
  app->fallthrough();
  app->add_option("--log-level", global.log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app->add_flag("--wide", global.wide,
                "Tables at their full width on a terminal too (they fit 100 columns there)");
  app->add_flag("--quiet,-q", global.quiet,
                "No progress and no info lines on stderr: warnings and errors only (--log-level "
                "warn, which children and ranks get too)");
  add_commands(*app, global, exit_code);
  return app;
}

int run_app(int argc, char** argv, const CommandRegistration& add_commands) {
  try {
    guard_standard_streams();
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  GlobalOptions global;
  global.arguments.assign(argv + std::min(argc, 1), argv + argc);
  int exit_code = kExitOk;
  const std::unique_ptr<CLI::App> app_holder = new_app(global, add_commands, exit_code);
  CLI::App& app = *app_holder;
  app.parse_complete_callback([&] {
    if (global.quiet && (global.log_level == "trace" || global.log_level == "debug" ||
                         global.log_level == "info")) {
      global.log_level = "warn";
    }
    log::configure(global.log_level);
    set_wide_tables(global.wide);
  });
  if (const std::string error = unknown_subcommand(app, named_subcommand(argc, argv));
      !error.empty()) {
    return usage_error(error);
  }
  // Bad input is exit code 2 with one line. The library exceptions below reach here only from
  // input no entry point anticipated; they are bad input too, never "failed" (exit 1 means a
  // benchmark ran and failed, which CI reads as a regression).
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return with_output_checked(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return with_output_checked(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return with_output_checked(app.exit(e));
  } catch (const CLI::ExtrasError& e) {
    const std::string named = unknown_option(app, argc, argv);
    return usage_error(!named.empty() ? named
                                      : echoed(e.what(), kMaxParserMessageChars) + " (see --help)");
  } catch (const CLI::ParseError& e) {
    return usage_error(echoed(e.what(), kMaxParserMessageChars) + " (see --help)");
  } catch (const UsageError& e) {
    return usage_error(e.what());
  } catch (const Interrupted& e) {
    die_by(e.signal_number());
  } catch (const nlohmann::json::exception& e) {
    return usage_error("malformed JSON input: " + echoed(e.what(), kMaxParserMessageChars));
  } catch (const YAML::Exception& e) {
    return usage_error("malformed YAML input: " + echoed(e.msg));
  } catch (const std::filesystem::filesystem_error& e) {
    return usage_error("cannot use '" + echoed(e.path1().string()) + "': " + e.code().message());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubench: failed: %s\n", first_line(e.what()).c_str());
    return kExitBenchmarkFailed;
  }
  try {
    throw_if_interrupted();  // a signal that came after the last wait still ends the process
  } catch (const Interrupted& e) {
    die_by(e.signal_number());
  }
  return with_output_checked(exit_code);
}

}  // namespace gpubench::cli
