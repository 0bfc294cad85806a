// Plain aligned text tables for the terminal.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// &, <, >, " as entities: text safe inside HTML or XML elements and attributes.
std::string escape_markup(const std::string& text);

// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a newline.
std::string csv_field(const std::string& text);

// "%.*f" without locale surprises.
std::string format_fixed(double value, int decimals);

}  // namespace gpubench
