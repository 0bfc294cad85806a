// --help wrapped to the terminal: each description (an option's, a subcommand's, the command's)
// broken at spaces so that no line passes the width (help_width, cli/terminal_width.h: piped to
// a pager or a file, help still reads), continuation lines indented under the description
// column.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "terminal_width.h"

namespace gpubench::cli {

// `text` broken at spaces into lines of at most `width` characters (a word longer than that on
// a line of its own); the text's own line breaks kept.
std::string wrapped(const std::string& text, size_t width);

class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(size_t width);
  std::string make_option_desc(const CLI::Option* option) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;

 private:
  size_t description_width() const;
  size_t width_;
};

}  // namespace gpubench::cli
