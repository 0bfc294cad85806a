// Where a series of nightly throughputs steps up or down: binary segmentation with a rank test.
#pragma once

#include <cstddef>
#include <vector>

namespace gpubench {

struct ChangePointOptions {
  // A split is kept when its rank-sum test, Bonferroni-adjusted over the candidate splits of
  // the segment it divides, is below this.
  double alpha = 0.01;
  // Points each side of a split must have: a shorter run (one outlier night) is never a step.
  size_t min_segment = 3;
  // A significant step smaller than this fraction of the level before it is not reported.
  double min_change = 0.02;
};

struct ChangePoint {
  size_t index = 0;    // the first point after the step
  double before = 0;   // median of the segment before (back to the previous change point)
  double after = 0;    // median of the segment after (up to the next change point)
  double change = 0;   // after / before - 1
  double p_value = 1;  // the split's Bonferroni-adjusted two-sided rank-sum p
};

// Binary segmentation: in a segment of at least 2 x min_segment points, every split leaving
// min_segment points on each side is a candidate; the one leaving the least absolute deviation
// from the two sides' medians is kept when the two-sided Mann-Whitney rank-sum test of its
// sides, times the candidates, is below alpha and the medians differ by at least min_change;
// then both sides are searched the same way. In the order of the series.
std::vector<ChangePoint> find_change_points(const std::vector<double>& series,
                                            const ChangePointOptions& options);

// The same over nights of several trials each (the nightly history: a point is a night, its
// level the median of its trials). Where to split is decided on the nights' medians as above;
// whether, on the trials: the rank-sum test of the two sides' trials, its variance inflated by
// the design effect of trials clustered in nights (1 + (k - 1) x ICC, with the intra-night
// correlation of the ranks estimated within each side), so that nights that differ more than
// their trials do not pass for a step; and it must hold with any one night left out, so that
// one outlier night cannot make a step. Nights with a single trial each are tested as above.
std::vector<ChangePoint> find_night_change_points(const std::vector<std::vector<double>>& nights,
                                                  const ChangePointOptions& options);

}  // namespace gpubench
