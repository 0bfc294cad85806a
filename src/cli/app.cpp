#include <cstdio>
#include <exception>

#include "commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/log.h"
#include "gpubench/build_info.h"

namespace gpubench::cli {
namespace {

// CLI11 reports a mistyped subcommand as "a subcommand is required"; name it instead.
std::string unknown_subcommand(const CLI::App& app, const std::string& name) {
  if (name.empty()) return "";
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return "";
    names.push_back(sub->get_name());
  }
  return "unknown subcommand '" + name + "'; known: " + join(names);
}

}  // namespace

std::string torch_command_description(const std::string& name) {
  for (const TorchCommand& command : kTorchCommands) {
    if (name == command.name) return command.description;
  }
  return "";
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fputs(text.c_str(), stdout);
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

int run_app(int argc, char** argv, const CommandRegistration& add_commands) {
  CLI::App app{"gpubench: deep-learning training throughput on GPUs (and CPUs)", "gpubench"};
  app.set_version_flag("--version", std::string(GPUBENCH_VERSION) + " (" GPUBENCH_GIT_COMMIT ")");
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions global;
  app.add_option("--log-level", global.log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.parse_complete_callback([&] { log::configure(global.log_level); });

  int exit_code = kExitOk;
  add_commands(app, global, exit_code);
  if (const std::string error = unknown_subcommand(app, named_subcommand(argc, argv));
      !error.empty()) {
    std::fprintf(stderr, "gpubench: error: %s\n", error.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gpubench: error: %s (see --help)\n", e.what());
    return kExitUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpubench: error: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubench: failed: %s\n", first_line(e.what()).c_str());
    return kExitBenchmarkFailed;
  }
  return exit_code;
}

}  // namespace gpubench::cli
