#include "common/text_table.h"

#include <cmath>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace gpubench {

std::string TextTable::render_markdown() const {
  std::string out = markdown_row(header_);
  out += markdown_row(std::vector<std::string>(header_.size(), "---"));
  for (const auto& row : rows_) out += markdown_row(row);
  return out;
}

std::string TextTable::render_csv() const {
  std::string out = csv_record(header_);
  for (const auto& row : rows_) out += csv_record(row);
  return out;
}

std::string TextTable::render_as(const std::string& format, size_t max_width) const {
  if (format == "table") return render(max_width);
  if (format == "markdown") return render_markdown();
  if (format == "csv") return render_csv();
  throw std::invalid_argument("no table format '" + format + "'");
}

std::vector<std::string> wrapped_lines(const std::string& text, size_t width, bool cut_long_words) {
  if (text.size() <= width) return {text};
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    const size_t space = std::min(text.find(' ', start), text.size());
    std::string word = text.substr(start, space - start);
    start = space + 1;
    while (cut_long_words && word.size() > width) {  // on lines of its own
      if (!line.empty()) lines.push_back(line);
      line.clear();
      lines.push_back(word.substr(0, width));
      word = word.substr(width);
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

TextTable::Measured TextTable::measured() const {
  Measured m;
  m.widths.assign(header_.size(), 0);
  m.longest_words.assign(header_.size(), 0);
  // Cells come from result files: shown with their control characters escaped.
  for (const auto& row : rows_) {
    std::vector<std::string> safe;
    for (const auto& cell : row) safe.push_back(terminal_safe(cell));
    m.rows.push_back(std::move(safe));
  }
  // Each column's width, and its longest word: how far it narrows before a word is cut.
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < m.widths.size(); ++i) {
      m.widths[i] = std::max(m.widths[i], row[i].size());
      size_t start = 0;
      while (start <= row[i].size()) {
        const size_t space = std::min(row[i].find(' ', start), row[i].size());
        m.longest_words[i] = std::max(m.longest_words[i], space - start);
        start = space + 1;
      }
    }
  };
  measure(header_);
  for (const auto& row : m.rows) measure(row);
  return m;
}

std::string TextTable::render_in_parts(size_t max_width, size_t repeated) const {
  repeated = std::min(repeated, header_.size());
  if (max_width == 0 || repeated == header_.size()) return render(max_width);
  const std::vector<size_t> narrowest = measured().longest_words;
  size_t kept = 0;  // the repeated columns' narrowest, each with its gap
  for (size_t c = 0; c < repeated; ++c) kept += narrowest[c] + 2;
  const size_t columns = header_.size() - repeated;
  std::string out;
  for (size_t first = repeated; first < header_.size();) {
    size_t last = first + 1, width = kept + narrowest[first];
    while (last < header_.size() && width + 2 + narrowest[last] <= max_width) {
      width += 2 + narrowest[last++];
    }
    const auto pick = [&](const std::vector<std::string>& row) {
      std::vector<std::string> part(
          row.begin(), row.begin() + static_cast<std::ptrdiff_t>(std::min(repeated, row.size())));
      for (size_t c = first; c < last; ++c) part.push_back(c < row.size() ? row[c] : "");
      return part;
    };
    TextTable part(pick(header_));
    for (const auto& row : rows_) part.add_row(pick(row));
    if (first > repeated || last < header_.size()) {
      const size_t from = first - repeated + 1, to = last - repeated;
      out += (first > repeated ? "\n(" : "(") +
             (from == to ? "column " + std::to_string(to)
                         : "columns " + std::to_string(from) + "-" + std::to_string(to)) +
             " of " + std::to_string(columns) + ")\n";
    }
    out += part.render(max_width);
    first = last;
  }
  return out;
}

std::string TextTable::render(size_t max_width) const {
  Measured m = measured();
  std::vector<size_t>& widths = m.widths;
  const std::vector<size_t>& longest_word = m.longest_words;
  const std::vector<std::vector<std::string>>& rows = m.rows;
  // Too wide: the widest column narrowed one character at a time, first down to its longest
  // word (its cells wrap at spaces), then, where that is not enough, down to kNarrowestColumn
  // (its words cut).
  const auto total = [&] {
    size_t sum = widths.empty() ? 0 : 2 * (widths.size() - 1);
    for (size_t width : widths) sum += width;
    return sum;
  };
  constexpr size_t kNarrowestColumn = 6;
  for (const bool cutting_words : {false, true}) {
    while (max_width > 0 && total() > max_width) {
      size_t widest = widths.size();
      for (size_t i = 0; i < widths.size(); ++i) {
        const size_t floor = cutting_words ? kNarrowestColumn : longest_word[i];
        if (widths[i] > floor && (widest == widths.size() || widths[i] > widths[widest])) {
          widest = i;
        }
      }
      if (widest == widths.size()) break;
      --widths[widest];
    }
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::vector<std::vector<std::string>> cells;
    size_t height = 1;
    for (size_t i = 0; i < widths.size(); ++i) {
      cells.push_back(wrapped_lines(i < row.size() ? row[i] : "", widths[i], true));
      height = std::max(height, cells.back().size());
    }
    std::string out;
    for (size_t l = 0; l < height; ++l) {
      std::string text;
      for (size_t i = 0; i < widths.size(); ++i) {
        const std::string cell = l < cells[i].size() ? cells[i][l] : "";
        text += cell;
        if (i + 1 < widths.size()) text += std::string(widths[i] - cell.size() + 2, ' ');
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
    return out;
  };
  std::string out = line(header_);
  std::vector<std::string> rule;
  for (size_t width : widths) rule.push_back(std::string(width, '-'));
  out += line(rule);
  for (const auto& row : rows) out += line(row);
  return out;
}

namespace {

std::string hex_escape(const char* prefix, unsigned value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "%s%0*x", prefix, digits, value);
  return text;
}

bool is_number(const std::string& text) {
  if (text.empty() || text.find_first_of(" \t\r\n") != std::string::npos) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

std::string terminal_safe(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c < 0x20 || c == 0x7f) {
      out += hex_escape("\\x", c, 2);
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // C1 controls, as CSI (U+009B)
      out += hex_escape("\\u", next, 4);
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : terminal_safe(text)) {
    if (c == '\\' || c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const std::string& cell : cells) line += " " + markdown_cell(cell) + " |";
  return line + "\n";
}

std::string csv_field(const std::string& text) {
  std::string field = text;
  if (field.size() > 1 && std::string("=+-@\t\r").find(field.front()) != std::string::npos &&
      !is_number(field)) {
    field = "'" + field;
  }
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_record(const std::vector<std::string>& cells) {
  std::string out;
  for (const std::string& cell : cells) out += (out.empty() ? "" : ",") + csv_field(cell);
  return out + "\n";
}

std::string escape_markup(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += hex_escape("\\x", static_cast<unsigned char>(c), 2);
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string format_fixed(double value, int decimals) {
  // Inputs are checked finite where they are read; a ratio of extremes can still overflow.
  if (!std::isfinite(value)) return "n/a";
  char text[64];
  if (std::fabs(value) >= 1e15) {  // past what a result may carry: no 300-digit cells
    std::snprintf(text, sizeof(text), "%.3e", value);
  } else {
    std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  }
  return text;
}

std::string counted_parameters(int64_t count) {
  const double n = static_cast<double>(count);
  const auto three_figures = [](double v) { return format_fixed(v, v < 10 ? 2 : v < 100 ? 1 : 0); };
  if (n >= 1e9) return three_figures(n / 1e9) + " billion parameters";
  if (n >= 1e6) return three_figures(n / 1e6) + " million parameters";
  return counted(count, "parameter");
}

std::string counted(int64_t count, const std::string& noun, const std::string& plural) {
  return std::to_string(count) + " " + (count == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

}  // namespace gpubench
