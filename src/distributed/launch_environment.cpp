#include "distributed/launch_environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {
namespace {

// Rank counts and indices (and ports, 65535) from a launcher's environment: more ranks than any
// launcher starts is a broken environment.
constexpr int kMaxRanks = 1 << 20;

// One rule for every launcher's variable: unset takes the fallback, set but empty is an error
// (WORLD_SIZE='' once ran as one process where MASTER_PORT='' was read as port 0).
int parse_count(const EnvironmentLookup& lookup, const std::string& name, int fallback,
                int max = kMaxRanks) {
  const auto text = lookup(name);
  if (!text) return fallback;
  if (text->empty()) {
    throw UsageError("environment variable " + name +
                     " is set but empty: give an integer from 0 to " + std::to_string(max) +
                     ", or unset it");
  }
  try {
    size_t used = 0;
    const int value = std::stoi(*text, &used);
    if (used == text->size() && value >= 0 && value <= max) return value;
  } catch (const std::exception&) {
  }
  throw UsageError("environment variable " + name + "='" + echoed(*text) +
                   "' is not an integer from 0 to " + std::to_string(max));
}

// A world's size: an integer from 1; a size of 0 is no world (OMPI_COMM_WORLD_SIZE=0 and
// SLURM_STEP_NUM_TASKS=0 once ran as one process).
int parse_world_size(const EnvironmentLookup& lookup, const std::string& launcher,
                     const std::string& name) {
  const int size = parse_count(lookup, name, 1);
  if (size < 1) throw UsageError(launcher + " environment: " + name + " is 0; a world has a rank");
  return size;
}

// The rendezvous host: where given, a host name or address, never empty and never with spaces
// or control characters (which c10d would try for minutes, and echo).
std::optional<std::string> parse_address(const EnvironmentLookup& lookup, const std::string& name) {
  const auto text = lookup(name);
  if (!text) return std::nullopt;
  const bool plain = !text->empty() && text->size() <= 253 &&
                     std::all_of(text->begin(), text->end(), [](unsigned char c) {
                       return std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == ':' ||
                              c == '[' || c == ']' || c == '%';
                     });
  if (!plain) {
    throw UsageError("environment variable " + name + "='" + echoed(*text) +
                     "' is not a host name or address (letters, digits, '.', '-', '_', ':')");
  }
  return text;
}

bool is_true(const std::optional<std::string>& text) {
  return text && (*text == "1" || *text == "True" || *text == "true");
}

std::string value_or(const std::optional<std::string>& text, const std::string& fallback) {
  return text && !text->empty() ? *text : fallback;
}

void check_consistent(const LaunchEnvironment& env) {
  if (env.rank >= env.world_size || env.local_rank >= env.local_world_size) {
    throw UsageError(env.launcher + " environment: rank " + std::to_string(env.rank) + " of " +
                     std::to_string(env.world_size) + " (local " + std::to_string(env.local_rank) +
                     " of " + std::to_string(env.local_world_size) + ") is out of range");
  }
  if (env.master_port <= 0 || env.master_port > 65535) {
    throw UsageError(env.launcher + " environment: MASTER_PORT " + std::to_string(env.master_port) +
                     " is not a TCP port (1-65535)");
  }
}

// torchrun's variables are set on purpose, so even a world of one rank is a process group (as
// DDP under `torchrun --nproc-per-node 1` is).
std::optional<LaunchEnvironment> from_torchrun(const EnvironmentLookup& lookup) {
  if (!lookup("RANK") || !lookup("WORLD_SIZE")) return std::nullopt;
  LaunchEnvironment env;
  env.world_size = parse_world_size(lookup, "torchrun", "WORLD_SIZE");
  const bool ours = lookup(kLauncherStoreVariable).has_value();
  env.launcher = ours ? "gpubench" : "torchrun";
  env.rank = parse_count(lookup, "RANK", 0);
  env.local_rank = parse_count(lookup, "LOCAL_RANK", env.rank);
  env.local_world_size = parse_count(lookup, "LOCAL_WORLD_SIZE", env.world_size);
  if (!lookup("MASTER_ADDR") || !lookup("MASTER_PORT")) {
    throw UsageError(
        "torchrun environment: RANK and WORLD_SIZE are set but MASTER_ADDR or "
        "MASTER_PORT is not");
  }
  env.master_addr = *parse_address(lookup, "MASTER_ADDR");
  env.master_port = parse_count(lookup, "MASTER_PORT", 0);
  env.store_hosted_by_launcher = ours || is_true(lookup("TORCHELASTIC_USE_AGENT_STORE"));
  return env;
}

// Slurm's step variables, not the allocation's: a shell inside salloc carries SLURM_NTASKS of
// the whole allocation without being one of its tasks.
std::optional<LaunchEnvironment> from_slurm(const EnvironmentLookup& lookup) {
  if (!lookup("SLURM_PROCID") || !lookup("SLURM_STEP_NUM_TASKS")) return std::nullopt;
  LaunchEnvironment env;
  env.launcher = "slurm";
  env.world_size = parse_world_size(lookup, "slurm", "SLURM_STEP_NUM_TASKS");
  if (env.world_size == 1) return std::nullopt;
  env.rank = parse_count(lookup, "SLURM_PROCID", 0);
  env.local_rank = parse_count(lookup, "SLURM_LOCALID", 0);
  const int nodes = std::max(1, parse_count(lookup, "SLURM_STEP_NUM_NODES", 1));
  env.local_world_size = (env.world_size + nodes - 1) / nodes;
  const auto node_list =
      lookup("SLURM_STEP_NODELIST") ? lookup("SLURM_STEP_NODELIST") : lookup("SLURM_JOB_NODELIST");
  const char* list_variable =
      lookup("SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST";
  std::string first_host;
  try {
    first_host = first_slurm_host(value_or(node_list, ""));
  } catch (const UsageError& error) {
    throw UsageError(std::string("slurm environment: ") + list_variable + "=" + error.what());
  }
  env.master_addr = value_or(parse_address(lookup, "MASTER_ADDR"), first_host);
  if (env.master_addr.empty()) {
    throw UsageError(
        "slurm environment: no MASTER_ADDR and no SLURM_STEP_NODELIST to take it from");
  }
  // A port of the job's own, so that two jobs sharing a first node do not collide.
  const int job = parse_count(lookup, "SLURM_JOB_ID", 0, std::numeric_limits<int>::max());
  env.master_port = parse_count(lookup, "MASTER_PORT", 20000 + job % 20000);
  return env;
}

std::optional<LaunchEnvironment> from_open_mpi(const EnvironmentLookup& lookup) {
  if (!lookup("OMPI_COMM_WORLD_RANK") || !lookup("OMPI_COMM_WORLD_SIZE")) return std::nullopt;
  LaunchEnvironment env;
  env.launcher = "mpi";
  env.world_size = parse_world_size(lookup, "mpi", "OMPI_COMM_WORLD_SIZE");
  if (env.world_size == 1) return std::nullopt;
  env.rank = parse_count(lookup, "OMPI_COMM_WORLD_RANK", 0);
  env.local_rank = parse_count(lookup, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
  env.local_world_size = parse_count(lookup, "OMPI_COMM_WORLD_LOCAL_SIZE", env.world_size);
  const auto master = parse_address(lookup, "MASTER_ADDR");
  if (!master && env.local_world_size < env.world_size) {
    throw UsageError(
        "Open MPI across nodes: set MASTER_ADDR to the first rank's host "
        "(mpirun -x MASTER_ADDR=node0)");
  }
  env.master_addr = value_or(master, "127.0.0.1");
  env.master_port = parse_count(lookup, "MASTER_PORT", 29500);
  return env;
}

}  // namespace

std::optional<LaunchEnvironment> detect_launch_environment(const EnvironmentLookup& lookup) {
  for (const auto& reader : {from_torchrun, from_slurm, from_open_mpi}) {
    if (auto env = reader(lookup)) {
      check_consistent(*env);
      env->gloo_interface = lookup(kGlooInterfaceVariable).value_or("");
      if (env->launcher == "gpubench") {
        env->rank_results_folder = lookup(kRankResultsVariable).value_or("");
      }
      return env;
    }
  }
  return std::nullopt;
}

std::string first_slurm_host(const std::string& node_list) {
  const auto malformed = [&](const std::string& why) {
    throw UsageError("'" + echoed(node_list) + "' is not a Slurm node list (such as " +
                     "node[01-04,07],gpu5): " + why);
  };
  // Host names: letters, digits, '-', '_' and '.'; a bracket holds numbers and ranges of them.
  const auto is_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  };
  std::string first;
  bool in_first = true;     // still in the first entry (before a top-level comma)
  bool in_bracket = false;  // inside [...]
  bool skipping = false;    // inside brackets, past the first number
  std::string number, range_start;
  const auto end_number = [&](char separator) {
    if (number.empty()) malformed("an empty number in brackets");
    if (separator == '-') {
      if (!range_start.empty()) malformed("a range with two '-'");
      range_start = number;
    } else {
      if (!range_start.empty() &&
          std::stoll(range_start.substr(0, 18)) > std::stoll(number.substr(0, 18))) {
        malformed("a range that runs backwards (" + echoed(range_start + "-" + number) + ")");
      }
      range_start.clear();
    }
    number.clear();
  };
  size_t entry_length = 0;
  for (const char c : node_list) {
    if (in_bracket) {
      if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
        number += c;
        if (in_first && !skipping) first += c;
      } else if (c == '-' || c == ',') {
        end_number(c);
        skipping = true;
      } else if (c == ']') {
        end_number(']');
        in_bracket = false;
      } else {
        malformed(std::string("'") + echoed(std::string(1, c)) + "' inside brackets");
      }
    } else if (c == '[') {
      if (entry_length == 0) malformed("a '[' with no host name before it");
      in_bracket = true;
      skipping = false;
    } else if (c == ']') {
      malformed("a ']' with no '[' before it");
    } else if (c == ',') {
      if (entry_length == 0) malformed("an empty entry");
      in_first = false;
      entry_length = 0;
    } else if (is_name(c)) {
      if (in_first) first += c;
      ++entry_length;
    } else {
      malformed(std::string("'") + echoed(std::string(1, c)) + "' in a host name");
    }
  }
  if (in_bracket) malformed("an unclosed '['");
  if (!node_list.empty() && entry_length == 0) malformed("an empty entry");
  return first;
}

}  // namespace gpubench
