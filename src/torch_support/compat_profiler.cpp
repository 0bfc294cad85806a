// compat.h's op profiler: Kineto on LibTorch 2.x, the legacy autograd profiler on 1.13.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "torch_support/compat.h"

#if GPUBENCH_TORCH_AT_LEAST(2, 0)
#include <torch/csrc/autograd/profiler_kineto.h>
#else
#include <torch/csrc/autograd/profiler_legacy.h>
#endif

namespace gpubench::compat {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

#if GPUBENCH_TORCH_AT_LEAST(2, 0)

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw std::runtime_error("cannot read the trace at " + path);
  return text.str();
}

}  // namespace

const char* profiler_name() {
  return "kineto";
}

void start_profiler(bool cuda) {
  using torch::profiler::impl::ActivityType;
  const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true);
  std::set<ActivityType> activities{ActivityType::CPU};
  if (cuda) activities.insert(ActivityType::CUDA);
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
}

std::string stop_profiler(const std::string& scratch_directory) {
  const std::unique_ptr<profiler::ProfilerResult> result = profiler::disableProfiler();
  std::string path = scratch_directory + "/.gpubench-trace-XXXXXX.json";
  const int fd = ::mkstemps(path.data(), 5);
  if (fd < 0) {
    throw std::runtime_error("cannot create a temporary trace in " + scratch_directory + ": " +
                             std::strerror(errno));
  }
  ::close(fd);
  std::string text;
  try {
    result->save(path);
    text = read_whole_file(path);
  } catch (...) {
    std::remove(path.c_str());
    throw;
  }
  std::remove(path.c_str());
  if (text.empty()) throw std::runtime_error("the profiler wrote an empty trace");
  return text;
}

#else

const char* profiler_name() {
  return "legacy";
}

void start_profiler(bool cuda) {
  profiler::enableProfilerLegacy(ProfilerConfig(cuda ? ProfilerState::CUDA : ProfilerState::CPU,
                                                /*report_input_shapes=*/true));
}

// The legacy profiler's ranges as Chrome trace "X" events, in the categories Kineto uses: a
// push and its pop share a handle (they may sit in different threads' lists).
std::string stop_profiler(const std::string&) {
  const profiler::thread_event_lists lists = profiler::disableProfilerLegacy();
  std::unordered_map<uint64_t, const profiler::LegacyEvent*> pushed;
  for (const auto& list : lists) {
    for (const auto& event : list) {
      if (event.kind() == profiler::EventKind::PushRange) pushed[event.handle()] = &event;
    }
  }
  nlohmann::json events = nlohmann::json::array();
  for (const auto& list : lists) {
    for (const auto& pop : list) {
      if (pop.kind() != profiler::EventKind::PopRange) continue;
      const auto found = pushed.find(pop.handle());
      if (found == pushed.end()) continue;
      const profiler::LegacyEvent& push = *found->second;
      const std::string name = push.name();
      nlohmann::json event = {
          {"ph", "X"},
          {"cat", name.rfind("ProfilerStep#", 0) == 0 ? "user_annotation" : "cpu_op"},
          {"name", name},
          {"pid", static_cast<int64_t>(::getpid())},
          {"tid", push.threadId()},
          {"ts", push.cpuUs()},
          {"dur", push.cpuElapsedUs(pop)}};
      const std::vector<std::vector<int64_t> > shapes = push.shapes();
      if (!shapes.empty()) event["args"] = {{"Input Dims", shapes}};
      events.push_back(std::move(event));
      pushed.erase(found);
    }
  }
  return json_text(nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}},
                   -1);
}

#endif

}  // namespace gpubench::compat
