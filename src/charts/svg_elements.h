// The charts' inline-SVG elements, and the width a text takes, so that a layout can make room
// for its labels before it draws them.
#pragma once

#include <string>

namespace gpubench::charts {

constexpr double kFontSize = 12;

// An upper estimate of `text`'s width in pixels at `font_size` in DejaVu Sans, the font the
// reports name first (per character: capitals 0.72 em, digits 0.64, wide letters 0.92, others
// 0.58, spaces and punctuation 0.36).
double text_width(const std::string& text, double font_size = kFontSize);

// `text` cut at a character with "..." after it where it is wider than `width` pixels.
std::string fitted_text(const std::string& text, double width, double font_size = kFontSize);

// A number with `decimals`, thousands grouped ("18,283.4").
std::string grouped_number(double value, int decimals);

std::string svg_number(double value);  // a coordinate: one decimal

struct TextStyle {
  const char* anchor = "start";  // start, middle, end
  double size = kFontSize;
  const char* weight = "normal";
  const char* fill = "#222";
};

// A <text> element; `tooltip`, where given, becomes its <title>.
std::string svg_text(double x, double y, const std::string& text, const TextStyle& style = {},
                     const std::string& tooltip = "");
std::string svg_line(double x1, double y1, double x2, double y2, const std::string& stroke,
                     double width = 1, const std::string& attributes = "");
std::string svg_rect(double x, double y, double width, double height, const std::string& fill,
                     const std::string& attributes = "", const std::string& tooltip = "");

// The opening tag of a chart, its accessible title, and its closing tag.
std::string svg_open(const std::string& css_class, double width, double height,
                     const std::string& title);
std::string svg_close();

}  // namespace gpubench::charts
