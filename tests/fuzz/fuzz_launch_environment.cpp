// The launcher environment (torchrun, Slurm, Open MPI variables): the input is NAME=VALUE lines.
#include <map>
#include <sstream>

#include "distributed/launch_environment.h"
#include "fuzz_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpubench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> variables;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t equals = line.find('=');
    if (equals != std::string::npos) variables[line.substr(0, equals)] = line.substr(equals + 1);
  }
  const EnvironmentLookup lookup = [&](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
  fuzz::expect_contract([&] {
    if (const auto launch = detect_launch_environment(lookup)) {
      if (launch->rank < 0 || launch->rank >= launch->world_size || launch->master_port < 1 ||
          launch->master_port > 65535) {
        fuzz::broken("an inconsistent launch accepted", text);
      }
    }
  });
  fuzz::expect_contract([&] { (void)first_slurm_host(text); });
  return 0;
}
