#include "charts/svg_elements.h"

#include <cctype>
#include <cmath>

#include "common/text_table.h"

namespace gpubench::charts {
namespace {

double em_of(unsigned char c) {
  if (c >= 0x80) return 0.36;  // a UTF-8 byte: several make one glyph, under an em in all
  if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%') return 0.92;
  if (std::isupper(c)) return 0.72;
  if (std::isdigit(c)) return 0.64;
  if (std::islower(c)) return 0.58;
  return 0.36;
}

}  // namespace

double text_width(const std::string& text, double font_size) {
  double ems = 0;
  for (unsigned char c : text) ems += em_of(c);
  return ems * font_size;
}

std::string fitted_text(const std::string& text, double width, double font_size) {
  if (text_width(text, font_size) <= width) return text;
  const double room = width - text_width("...", font_size);
  double used = 0;
  size_t end = 0;
  while (end < text.size() &&
         used + em_of(static_cast<unsigned char>(text[end])) * font_size <= room) {
    used += em_of(static_cast<unsigned char>(text[end])) * font_size;
    ++end;
  }
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // whole glyphs
  return text.substr(0, end) + "...";
}

std::string grouped_number(double value, int decimals) {
  std::string text = format_fixed(std::fabs(value), decimals);
  const size_t point = text.find('.');
  for (size_t at = point == std::string::npos ? text.size() : point; at > 3; at -= 3) {
    text.insert(at - 3, ",");
  }
  return (value < 0 ? "-" : "") + text;
}

std::string svg_number(double value) {
  return format_fixed(value, 1);
}

std::string svg_text(double x, double y, const std::string& text, const TextStyle& style,
                     const std::string& tooltip) {
  std::string out = "<text x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\" text-anchor=\"" +
                    style.anchor + "\" font-size=\"" + format_fixed(style.size, 0) + "\"";
  if (std::string(style.weight) != "normal")
    out += std::string(" font-weight=\"") + style.weight + "\"";
  out += std::string(" fill=\"") + style.fill + "\">";
  if (!tooltip.empty()) out += "<title>" + escape_markup(tooltip) + "</title>";
  return out + escape_markup(text) + "</text>\n";
}

std::string svg_line(double x1, double y1, double x2, double y2, const std::string& stroke,
                     double width, const std::string& attributes) {
  return "<line x1=\"" + svg_number(x1) + "\" y1=\"" + svg_number(y1) + "\" x2=\"" +
         svg_number(x2) + "\" y2=\"" + svg_number(y2) + "\" stroke=\"" + stroke +
         "\" stroke-width=\"" + format_fixed(width, 1) + "\"" +
         (attributes.empty() ? "" : " " + attributes) + "/>\n";
}

std::string svg_rect(double x, double y, double width, double height, const std::string& fill,
                     const std::string& attributes, const std::string& tooltip) {
  std::string out = "<rect x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\" width=\"" +
                    svg_number(std::max(width, 0.0)) + "\" height=\"" +
                    svg_number(std::max(height, 0.0)) + "\" fill=\"" + fill + "\"" +
                    (attributes.empty() ? "" : " " + attributes);
  if (tooltip.empty()) return out + "/>\n";
  return out + "><title>" + escape_markup(tooltip) + "</title></rect>\n";
}

std::string svg_open(const std::string& css_class, double width, double height,
                     const std::string& title) {
  return "<svg class=\"" + css_class + "\" width=\"" + svg_number(width) + "\" height=\"" +
         svg_number(height) + "\" viewBox=\"0 0 " + svg_number(width) + " " + svg_number(height) +
         "\" role=\"img\" font-family=\"DejaVu Sans, sans-serif\">\n<title>" +
         escape_markup(title) + "</title>\n";
}

std::string svg_close() {
  return "</svg>\n";
}

}  // namespace gpubench::charts
