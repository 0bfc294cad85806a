// gpubench-train: the subcommands that need LibTorch. `gpubench` hands them over here; the
// rank launcher and the suite runner start their children from here directly.
#include "commands.h"

int main(int argc, char** argv) {
  using namespace gpubench::cli;
  return run_app(argc, argv, [](CLI::App& app, const GlobalOptions& global, int& exit_code) {
    add_train_command(app, global, exit_code);
    add_run_command(app, global, exit_code);
    add_allreduce_command(app, global, exit_code);
    add_fit_command(app, exit_code);
    add_infer_command(app, exit_code);
    add_models_command(app, exit_code);
    add_env_command(app, exit_code);
  });
}
