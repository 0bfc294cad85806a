// gpubench env: the system block a result would record.
#include <cstdio>

#include "commands.h"
#include "common/json_text.h"
#include "system/system_probe.h"

namespace gpubench::cli {

void add_env_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("env", torch_command_description("env"));
  cmd->callback([&exit_code] {
    const nlohmann::json system = collect_system_info();
    std::printf("%s\n", json_text(system).c_str());
    exit_code = kExitOk;
  });
}

}  // namespace gpubench::cli
