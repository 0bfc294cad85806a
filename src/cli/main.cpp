// gpubench: report, compare, regress and specs here, without LibTorch; the subcommands that train
// (kTorchCommands) are gpubench-train's, which this process becomes (exec) with the same
// arguments.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
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

// `Options`' subcommand, added by `add`, whose callback applies `check` to what was parsed.
template <typename Options, typename Add, typename Check>
void add_checked(CLI::App& app, int& exit_code, Add add, Check check) {
  auto options = std::make_shared<Options>();
  add(app, options)->callback([options, &exit_code, check] {
    check(*options);
    exit_code = kExitOk;
  });
}

// The settings of train, infer, fit and allreduce, and run's suite file, checked here with
// gpubench-train's own definitions and words before this process becomes it: bad input costs no
// LibTorch start (0.4 s of CPU). What needs LibTorch (the model registry, the devices) is checked
// there. A suite that can be read once only (a pipe) is left to gpubench-train.
using AddCheckedSubcommand = void (*)(CLI::App&, int&);
const std::map<std::string, AddCheckedSubcommand> kCheckedSubcommands = {
    {"train",
     [](CLI::App& app, int& code) {
       add_checked<TrainOptions>(app, code, add_train_subcommand, [](TrainOptions& o) {
         naming_options([&] { requested(*o.settings); });
       });
     }},
    {"infer",
     [](CLI::App& app, int& code) {
       add_checked<InferOptions>(app, code, add_infer_subcommand, [](InferOptions& o) {
         naming_options([&] { infer_request(o, batch_sizes(*o.settings)); });
       });
     }},
    {"fit",
     [](CLI::App& app, int& code) {
       add_checked<FitCommandOptions>(app, code, add_fit_subcommand, [](FitCommandOptions& o) {
         naming_options([&] { checked_fit_settings(o); });
       });
     }},
    {"allreduce",
     [](CLI::App& app, int& code) {
       add_checked<AllreduceOptions>(app, code, add_allreduce_subcommand,
                                     [](AllreduceOptions& o) { checked_sweep(o); });
     }},
    {"run",
     [](CLI::App& app, int& code) {
       add_checked<RunOptions>(app, code, add_run_subcommand, [](RunOptions& o) {
         if (suite_can_be_read_twice(o)) suite_entries(o);
       });
     }},
};

// The exit code of a refusal of `subcommand`'s settings, or 0 to hand over.
int refusal_of_settings(const std::string& subcommand, int argc, char** argv) {
  return run_app(argc, argv, [&subcommand](CLI::App& app, const GlobalOptions&, int& exit_code) {
    kCheckedSubcommands.at(subcommand)(app, exit_code);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string subcommand = named_subcommand(argc, argv);
  if (kCheckedSubcommands.count(subcommand) != 0 && !asks_for_help(argc, argv) &&
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
