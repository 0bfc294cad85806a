#include "charts/palette.h"

namespace gpubench::charts {

const char* series_colour(size_t index) {
  static const char* const kColours[kColouredSeries] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                        "#59a14f", "#edc948", "#b07aa1", "#9c755f"};
  return index < kColouredSeries ? kColours[index] : kOneColour;
}

std::string hatch_pattern(const std::string& id, const std::string& colour) {
  return "<pattern id=\"" + id +
         "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\"/>"
         "<rect width=\"3\" height=\"6\" fill=\"" +
         colour + "\"/></pattern>\n";
}

}  // namespace gpubench::charts
