#include <cstdio>
#include <exception>

#include "commands.h"
#include "gpubench/build_info.h"
#include "common/errors.h"
#include "common/log.h"

namespace {

// CLI11 reports a mistyped subcommand as "a subcommand is required"; name it instead.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--log-level") {
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == arg) return "";
      names.push_back(sub->get_name());
    }
    return "unknown subcommand '" + arg + "'; known: " + gpubench::join(names);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpubench::cli;
  CLI::App app{"gpubench: deep-learning training throughput on GPUs (and CPUs)", "gpubench"};
  app.set_version_flag("--version", std::string(GPUBENCH_VERSION) + " (" GPUBENCH_GIT_COMMIT ")");
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions global;
  app.add_option("--log-level", global.log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.parse_complete_callback([&] { gpubench::log::configure(global.log_level); });

  int exit_code = kExitOk;
  add_train_command(app, global, exit_code);
  add_run_command(app, global, exit_code);
  add_allreduce_command(app, global, exit_code);
  add_models_command(app, exit_code);
  add_env_command(app, exit_code);
  add_report_command(app, exit_code);
  add_compare_command(app, exit_code);
  add_regress_command(app, exit_code);

  if (const std::string error = unknown_subcommand(app, argc, argv); !error.empty()) {
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
  } catch (const gpubench::UsageError& e) {
    std::fprintf(stderr, "gpubench: error: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubench: failed: %s\n", gpubench::first_line(e.what()).c_str());
    return kExitBenchmarkFailed;
  }
  return exit_code;
}
