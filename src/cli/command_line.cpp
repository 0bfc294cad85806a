// Every subcommand in one call: gpubench-train's main (the subcommands that need LibTorch;
// `gpubench` hands them over to it, and the rank launcher and the suite runner start their
// children with it), and a user's executable with its own models (include/gpubench/benchmark.h).
// It answers the LibTorch-free subcommands too, so that help-reference describes every one.
#include "gpubench/benchmark.h"  // run_command_line

#include "commands.h"
#include "launcher/launch.h"

namespace {

using namespace gpubench::cli;

void add_every_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  add_train_command(app, global, exit_code);
  add_infer_command(app, global, exit_code);
  add_run_command(app, global, exit_code);
  add_run_benchmark_command(app, global);
  add_allreduce_command(app, global, exit_code);
  add_fit_command(app, exit_code);
  add_models_command(app, exit_code);
  add_env_command(app, exit_code);
  add_torch_free_commands(app, exit_code);
}

}  // namespace

namespace gpubench {

int run_command_line(int argc, char** argv) {
  enable_test_hooks_from_environment();
  return cli::run_app(argc, argv,
                      [](CLI::App& app, const cli::GlobalOptions& global, int& exit_code) {
                        add_every_command(app, global, exit_code);
                        cli::add_help_reference_command(app, add_every_command, exit_code);
                      });
}

}  // namespace gpubench
