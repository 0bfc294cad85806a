// Markdown that gpubench writes (fit's and scale's reports), as text for the terminal: its
// paragraphs and bullets wrapped to a width, its tables aligned and narrowed to it, or cut into
// parts of as many columns as fit, each with the first column (render_text_table).
#pragma once

#include <cstddef>
#include <string>

namespace gpubench {

// One line broken at spaces to `max_width` (0: as it is), a "- " bullet's continuation lines
// under its text; each line ends in a newline.
std::string wrapped_line(const std::string& line, size_t max_width);

// `max_width` 0: tables aligned at their full width and text unwrapped.
std::string markdown_as_text(const std::string& markdown, size_t max_width);

}  // namespace gpubench
