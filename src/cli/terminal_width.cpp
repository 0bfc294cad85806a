#include "terminal_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace gpubench::cli {

std::optional<size_t> terminal_columns() {
  if (::isatty(STDOUT_FILENO) != 1) return std::nullopt;
  winsize window{};
  // A terminal that does not say its size (a bare pseudo-terminal) is taken as 100 columns.
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &window) != 0 || window.ws_col == 0) {
    return kDefaultOutputWidth;
  }
  return window.ws_col;
}

size_t help_width() {
  constexpr size_t kNarrowest = 60;
  if (const auto columns = terminal_columns()) return std::max(kNarrowest, *columns);
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long value = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && value > 0 && value <= 10000) {
      return std::max(kNarrowest, static_cast<size_t>(value));
    }
  }
  return kDefaultOutputWidth;
}

size_t table_width(bool wide, std::optional<size_t> terminal) {
  if (wide || !terminal) return 0;
  return std::min(kDefaultOutputWidth, *terminal);
}

namespace {
bool wide_tables = false;
}  // namespace

void set_wide_tables(bool wide) {
  wide_tables = wide;
}

size_t table_width() {
  return table_width(wide_tables, terminal_columns());
}

ReadingOutput reading_output(const std::string& given, const std::string& output,
                             const std::string& elsewhere) {
  if (given == "table") {
    return {given, table_width(wide_tables, terminal_columns().value_or(kDefaultOutputWidth))};
  }
  if (!given.empty()) return {given, table_width()};
  return {output.empty() && terminal_columns() ? "table" : elsewhere, table_width()};
}

}  // namespace gpubench::cli
