// A chart's value axis: its range, its ticks at round numbers and their labels, linear or
// logarithmic.
#pragma once

#include <string>
#include <vector>

namespace gpubench::charts {

struct Axis {
  double low = 0, high = 1;
  bool log = false;
  std::vector<double> ticks;  // within [low, high], ascending
  double step = 1;            // a linear axis's tick step, which sets its labels' decimals

  // Where `value` lies along the axis, 0 at `low` and 1 at `high`, clamped to [0, 1].
  double fraction(double value) const;
  std::string label(double value) const;
};

// Ticks at 1, 2, 2.5 or 5 times a power of ten, about `ticks` of them, the range widened to the
// outer ticks; from zero when `from_zero` and the values are not negative.
Axis linear_axis(double low, double high, bool from_zero, int ticks = 5);

// Decades that enclose [low, high] (low > 0), with 2 and 5 between them over two decades or less.
Axis log_axis(double low, double high);

// Values that span two decades or more (largest / smallest positive) read on a log axis.
bool spans_decades(double low, double high);

// The axis for values drawn from zero (bars): log where they span decades, else linear from 0.
Axis value_axis(double low, double high);

}  // namespace gpubench::charts
