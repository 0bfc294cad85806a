// Plain aligned text tables for the terminal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpubench {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Aligned columns for the terminal; with a `max_width`, the widest columns narrowed (to 6
  // characters at the least) until the table fits it, their cells wrapped onto more lines.
  std::string render(size_t max_width = 0) const;
  // As render, but a table too wide for `max_width` with its words whole is cut into parts of
  // as many columns as fit, each part headed "(columns 3-5 of 9)" (counting the columns after
  // the first `repeated`) and repeating those first `repeated` columns. 0: render().
  std::string render_in_parts(size_t max_width, size_t repeated) const;
  // A Markdown table (markdown_row), and CSV (csv_field): one header record, a record per row.
  std::string render_markdown() const;
  std::string render_csv() const;
  // By its format's name: "table" (render), "markdown" or "csv"; std::invalid_argument for
  // another (the commands check theirs first: kTextTableFormats).
  std::string render_as(const std::string& format, size_t max_width = 0) const;

 private:
  // The cells as shown (control characters escaped), each column's width and its longest word.
  struct Measured {
    std::vector<std::vector<std::string>> rows;
    std::vector<size_t> widths, longest_words;
  };
  Measured measured() const;

  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// The formats a TextTable renders in, and with JSON (the rows as the command's own document) the
// --format values of the commands that print one table.
inline const std::vector<std::string> kTextTableFormats = {"table", "markdown", "csv"};
inline const std::vector<std::string> kTableCommandFormats = {"table", "markdown", "csv", "json"};

// Text from result files (written by many machines and people) never changes the structure of
// an output: each format's escaping below.

// &, <, >, " as entities, and the control characters XML 1.0 forbids (all below 0x20 but tab,
// newline and carriage return) as "\xNN" text: safe inside HTML or XML elements and attributes,
// and well-formed for CI's JUnit parsers.
std::string escape_markup(const std::string& text);

// Control characters (C0, DEL and, in UTF-8, C1) as "\xNN" / "\u00NN" text, so that no escape
// sequence in a field reaches a terminal; newlines too, so a cell stays on its line.
std::string terminal_safe(const std::string& text);

// A Markdown table cell: terminal_safe, with \ and | escaped, so a cell cannot end itself or
// forge a row.
std::string markdown_cell(const std::string& text);
// One Markdown table row of markdown_cell()s: "| a | b |\n".
std::string markdown_row(const std::vector<std::string>& cells);

// `text` in lines of at most `width` characters, broken at its spaces; a word longer than that is
// cut into pieces of `width` (`cut_long_words`), else kept whole on a line of its own. Text that
// fits is its one line as it is.
std::vector<std::string> wrapped_lines(const std::string& text, size_t width, bool cut_long_words);

// A CSV field: a text cell that a spreadsheet would take for a formula (= + - @ tab or CR first,
// more than that one character, and not a number) gets a leading ' (OWASP's CSV injection advice);
// then quoted (quotes doubled) when it holds a comma, a quote or a line break. Numbers stay
// numbers.
std::string csv_field(const std::string& text);

// One CSV record of csv_field()s: "a,b\n".
std::string csv_record(const std::vector<std::string>& cells);

// "%.*f" without locale surprises.
std::string format_fixed(double value, int decimals);

// "1 thread", "2 threads": `count` and the noun, plural where the count is not 1 (`plural`, or
// the noun and an s).
std::string counted(int64_t count, const std::string& noun, const std::string& plural = "");
// A model's size to three figures: "1.24 billion parameters", "25.6 million parameters",
// "4,200 parameters".
std::string counted_parameters(int64_t count);

}  // namespace gpubench
