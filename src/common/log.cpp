#include "common/log.h"

#include "common/input_limits.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace gpubench::log {
namespace {

std::shared_ptr<spdlog::logger> logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto created = spdlog::stderr_color_mt("gpubench");
    created->set_pattern("[%H:%M:%S] [%^%l%$] %v");
    return created;
  }();
  return instance;
}

}  // namespace

void configure(const std::string& level) {
  logger()->set_level(spdlog::level::from_str(level));
}

bool enabled(Level level) {
  switch (level) {
    case Level::kDebug:
      return logger()->should_log(spdlog::level::debug);
    case Level::kInfo:
      return logger()->should_log(spdlog::level::info);
    case Level::kWarn:
      return logger()->should_log(spdlog::level::warn);
    case Level::kError:
      return logger()->should_log(spdlog::level::err);
  }
  return true;
}

void write(Level level, const std::string& raw) {
  // One entry is one line whatever it quotes (an address from the environment, a library's
  // message): a control character would split it or drive the terminal.
  const std::string message = shown(raw);
  switch (level) {
    case Level::kDebug:
      logger()->debug(message);
      break;
    case Level::kInfo:
      logger()->info(message);
      break;
    case Level::kWarn:
      logger()->warn(message);
      break;
    case Level::kError:
      logger()->error(message);
      break;
  }
}

}  // namespace gpubench::log
