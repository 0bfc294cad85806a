// gpubench-train: the subcommands that need LibTorch. `gpubench` hands them over here; the
// rank launcher and the suite runner start their children from here directly. It answers the
// LibTorch-free subcommands too, so that help-reference describes every subcommand.
#include "commands.h"
#include "common/environment.h"
#include "testing/test_hooks.h"

namespace {

using namespace gpubench::cli;

void add_every_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  add_train_command(app, global, exit_code);
  add_infer_command(app, exit_code);
  add_run_command(app, global, exit_code);
  add_allreduce_command(app, global, exit_code);
  add_fit_command(app, exit_code);
  add_models_command(app, exit_code);
  add_env_command(app, exit_code);
  add_report_command(app, exit_code);
  add_compare_command(app, exit_code);
  add_regress_command(app, exit_code);
  add_trend_command(app, exit_code);
  add_specs_command(app, exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  gpubench::enable_test_hooks(gpubench::process_environment()(gpubench::kTestHooksVariable) ==
                              std::optional<std::string>("1"));
  return run_app(argc, argv, [](CLI::App& app, const GlobalOptions& global, int& exit_code) {
    add_every_command(app, global, exit_code);
    add_help_reference_command(app, add_every_command, exit_code);
  });
}
