#include "help_formatter.h"

#include <sstream>

#include "common/errors.h"
#include "common/text_table.h"

namespace gpubench::cli {

std::string wrapped(const std::string& text, size_t width) {
  std::string out;
  std::istringstream paragraphs(text);
  bool first_paragraph = true;
  for (std::string paragraph; std::getline(paragraphs, paragraph);) {
    if (!first_paragraph) out += "\n";
    first_paragraph = false;
    out += join(wrapped_lines(paragraph, width, /*cut_long_words=*/false), "\n");
  }
  return out;
}

WrappingFormatter::WrappingFormatter(size_t width) : width_(width) {
  column_width(30);  // CLI11's default, kept: the descriptions start where they always did
}

size_t WrappingFormatter::description_width() const {
  return width_ > column_width_ + 20 ? width_ - column_width_ : 20;
}

std::string WrappingFormatter::make_option_desc(const CLI::Option* option) const {
  return wrapped(CLI::Formatter::make_option_desc(option), description_width());
}

std::string WrappingFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(true),
                           wrapped(sub->get_description(), description_width()), column_width_);
  return out.str();
}

std::string WrappingFormatter::make_description(const CLI::App* app) const {
  const std::string description = CLI::Formatter::make_description(app);
  return description.empty() ? description : wrapped(description, width_) + "\n";
}

}  // namespace gpubench::cli
