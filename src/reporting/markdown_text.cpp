#include "reporting/markdown_text.h"

#include <sstream>
#include <vector>

#include "common/text_table.h"

namespace gpubench {
namespace {

bool is_table_line(const std::string& line) {
  return line.size() > 1 && line.front() == '|';
}

// "| a | b \| c |" -> {"a", "b | c"}: markdown_cell's escapes undone.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      cell += line[++i];
    } else if (line[i] == '|') {
      const size_t first = cell.find_first_not_of(' ');
      const size_t last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

bool is_separator(const std::vector<std::string>& cells) {
  for (const std::string& cell : cells) {
    if (cell.find_first_not_of("-: ") != std::string::npos || cell.empty()) return false;
  }
  return !cells.empty();
}

// A table's lines (header, separator, rows), its first column repeated in each part.
std::string table_text(const std::vector<std::string>& lines, size_t max_width) {
  TextTable table(cells_of(lines.front()));
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = cells_of(lines[i]);
    if (i == 1 && is_separator(cells)) continue;
    table.add_row(std::move(cells));
  }
  return table.render_in_parts(max_width, 1);
}

}  // namespace

std::string wrapped_line(const std::string& line, size_t max_width) {
  if (max_width <= 2 || line.size() <= max_width) return line + "\n";  // 0: as it is
  const bool bullet = line.rfind("- ", 0) == 0;
  const std::string indent = bullet ? "  " : "";
  std::string out;
  for (const std::string& part :
       wrapped_lines(bullet ? line.substr(2) : line, max_width - indent.size(), true)) {
    out += (out.empty() ? (bullet ? "- " : "") : indent) + part + "\n";
  }
  return out;
}

std::string markdown_as_text(const std::string& markdown, size_t max_width) {
  std::istringstream in(markdown);
  std::vector<std::string> table;
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (is_table_line(line)) {
      table.push_back(line);
      continue;
    }
    if (!table.empty()) out += table_text(table, max_width), table.clear();
    out += wrapped_line(line, max_width);
  }
  if (!table.empty()) out += table_text(table, max_width);
  return out;
}

}  // namespace gpubench
