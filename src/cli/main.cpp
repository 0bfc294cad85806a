// gpubench: report, compare, regress and specs here, without LibTorch; the subcommands that train
// (kTorchCommands) are gpubench-train's, which this process becomes (exec) with the same
// arguments.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "allreduce_options.h"
#include "benchmark_options.h"
#include "commands.h"
#include "fit_options.h"
#include "infer_options.h"
#include "run_options.h"

namespace {

using namespace gpubench::cli;

bool is_torch_command(const std::string& name) {
  return !torch_command_description(name).empty();
}

// gpubench-train beside this executable.
std::string torch_executable() {
  char self[4096] = {};
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string path = length > 0 ? std::string(self, static_cast<size_t>(length)) : "";
  const auto slash = path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/" +
         kTorchExecutable;
}

[[noreturn]] void become_torch_executable(char** argv) {
  const std::string path = torch_executable();
  argv[0] = const_cast<char*>(path.c_str());
  ::execv(path.c_str(), argv);
  std::fprintf(stderr, "gpubench: failed: cannot run '%s': %s\n", path.c_str(),
               std::strerror(errno));
  std::exit(kExitBenchmarkFailed);
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "--help-all" || arg == "--version") return true;
  }
  return false;
}

// The settings of train, infer, fit and allreduce, and run's suite file, checked here with
// gpubench-train's own definitions and words before this process becomes it: bad input costs no
// LibTorch start (0.4 s of CPU). What needs LibTorch (the model registry, the devices) is checked
// there. A suite that can be read once only (a pipe) is left to gpubench-train. Returns the exit
// code of a refusal, or 0 to hand over.
int refusal_of_settings(const std::string& subcommand, int argc, char** argv) {
  return run_app(argc, argv, [&subcommand](CLI::App& app, const GlobalOptions&, int& exit_code) {
    if (subcommand == "train") {
      auto options = std::make_shared<TrainOptions>();
      add_train_subcommand(app, options)->callback([options, &exit_code] {
        requested(*options->settings);
        exit_code = kExitOk;
      });
    } else if (subcommand == "infer") {
      auto options = std::make_shared<InferOptions>();
      add_infer_subcommand(app, options)->callback([options, &exit_code] {
        infer_request(*options, batch_sizes(*options->settings));
        exit_code = kExitOk;
      });
    } else if (subcommand == "allreduce") {
      auto options = std::make_shared<AllreduceOptions>();
      add_allreduce_subcommand(app, options)->callback([options, &exit_code] {
        checked_sweep(*options);
        exit_code = kExitOk;
      });
    } else if (subcommand == "run") {
      auto options = std::make_shared<RunOptions>();
      add_run_subcommand(app, options)->callback([options, &exit_code] {
        if (suite_can_be_read_twice(*options)) suite_entries(*options);
        exit_code = kExitOk;
      });
    } else {
      auto options = std::make_shared<FitCommandOptions>();
      add_fit_subcommand(app, options)->callback([options, &exit_code] {
        checked_fit_settings(*options);
        exit_code = kExitOk;
      });
    }
  });
}

bool has_checked_settings(const std::string& subcommand) {
  return subcommand == "train" || subcommand == "infer" || subcommand == "fit" ||
         subcommand == "run" || subcommand == "allreduce";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string subcommand = named_subcommand(argc, argv);
  if (has_checked_settings(subcommand) && !asks_for_help(argc, argv) &&
      refusal_of_settings(subcommand, argc, argv) == kExitUsage) {
    return kExitUsage;
  }
  if (is_torch_command(subcommand)) become_torch_executable(argv);
  return run_app(argc, argv, [](CLI::App& app, const GlobalOptions&, int& exit_code) {
    for (const TorchCommand& command : kTorchCommands) {
      app.add_subcommand(command.name, command.description);  // listed in --help only
    }
    add_torch_free_commands(app, exit_code);
  });
}
