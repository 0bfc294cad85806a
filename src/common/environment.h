// Environment variables: read through an injectable lookup, in one place per process (the CLI
// reads them before a benchmark starts; nothing deeper calls getenv), and every name gpubench
// itself defines, listed here.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace gpubench {

using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
// This process's environment.
EnvironmentLookup process_environment();

// "1": the test hooks on (testing/test_hooks.h): the hidden test models and fault injection.
inline constexpr const char* kTestHooksVariable = "GPUBENCH_TEST_HOOKS";
// Test hook, testing/fault_injection.h: throw|oom|abort|hang[:MODEL_OR_PRECISION_OR_rankN];
// ignored, with a warning, unless the test hooks are on.
inline constexpr const char* kFaultInjectionVariable = "GPUBENCH_FAULT_INJECTION";
// The host memory gpubench may use ("12G"), instead of MemAvailable divided among the ranks here
// (features/memory_plan.h). For tests, and for a node shared with other jobs.
inline constexpr const char* kHostMemoryVariable = "GPUBENCH_HOST_MEMORY";
// Set by gpubench's launcher for its ranks: the folder where every rank writes rank-N.json.
inline constexpr const char* kRankResultsVariable = "GPUBENCH_RANK_RESULTS";
// Set (with torchrun's variables) by gpubench's launcher, which hosts the TCPStore.
inline constexpr const char* kLauncherStoreVariable = "GPUBENCH_LAUNCHER_STORE";
// The system's: where a run's private hand-over folder goes (launcher/temporary_folder.h).
inline constexpr const char* kTemporaryDirectoryVariable = "TMPDIR";
// Gloo's own: the network interface CPU ranks talk over.
inline constexpr const char* kGlooInterfaceVariable = "GLOO_SOCKET_IFNAME";

}  // namespace gpubench
