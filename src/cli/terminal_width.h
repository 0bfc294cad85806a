// How wide the output may be: help wraps to the terminal's width, and tables fit 100 columns on
// a terminal (docs/training.md), wider with --wide or where standard output is not a terminal.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace gpubench::cli {

inline constexpr size_t kDefaultOutputWidth = 100;

// Standard output's terminal width (100 where the terminal does not say); nothing where it is not
// a terminal.
std::optional<size_t> terminal_columns();

// The terminal's width, else $COLUMNS, else 100; at least 60.
size_t help_width();

// --wide, once the command line is read (as the log level is).
void set_wide_tables(bool wide);

// The width a table is fitted to: 100 columns (or a narrower terminal's) on a terminal; 0 (any
// width) with --wide or where standard output is not a terminal.
size_t table_width();
// The same decision, from its inputs.
size_t table_width(bool wide, std::optional<size_t> terminal);

// How a reading command (report, compare, trend, specs, regress, fit, scale) prints.
struct ReadingOutput {
  // As given; else "table" where standard output is a terminal (and there is no --output), else
  // the command's `elsewhere`.
  std::string format;
  // The width its tables are fitted to: table_width(); where --format table was asked for, 100
  // columns (the terminal's width where narrower) into a pipe too, 0 (whole) with --wide.
  size_t table_width = 0;
};
ReadingOutput reading_output(const std::string& given, const std::string& output,
                             const std::string& elsewhere = "markdown");
inline constexpr const char* kReadingFormatHelp =
    "table (fitted to the terminal: the default there), markdown (the default elsewhere), csv, "
    "json or html";

}  // namespace gpubench::cli
