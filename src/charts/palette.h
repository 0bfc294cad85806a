// The charts' colours: one per series up to kColouredSeries, never repeated; past that, series
// are told apart by their labels and drawn in one colour.
#pragma once

#include <cstddef>
#include <string>

namespace gpubench::charts {

constexpr size_t kColouredSeries = 8;
constexpr const char* kOneColour = "#4e79a7";
constexpr const char* kErrorBarColour = "#333333";

// Series `index`'s colour (Tableau 10's first eight); kOneColour from kColouredSeries on.
const char* series_colour(size_t index);

// A <pattern> of diagonal stripes in `colour`, the mark of a published figure's bar.
std::string hatch_pattern(const std::string& id, const std::string& colour);

}  // namespace gpubench::charts
