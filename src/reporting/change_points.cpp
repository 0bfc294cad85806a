#include "reporting/change_points.h"

#include <algorithm>
#include <cmath>

#include "results/statistics.h"

namespace gpubench {
namespace {

struct Split {
  size_t index = 0;
  double p_value = 1;
};

std::vector<double> part(const std::vector<double>& series, size_t begin, size_t end) {
  return {series.begin() + static_cast<std::ptrdiff_t>(begin),
          series.begin() + static_cast<std::ptrdiff_t>(end)};
}

// The best split of [begin, end) when it passes the rule, else nothing (index 0).
Split best_split(const std::vector<double>& series, size_t begin, size_t end,
                 const ChangePointOptions& options) {
  const size_t m = std::max<size_t>(options.min_segment, 2);  // Welch needs two a side
  if (end - begin < 2 * m) return {};
  const size_t candidates = end - begin - 2 * m + 1;
  Split best;
  for (size_t k = begin + m; k + m <= end; ++k) {
    const double p = welch_t_test_two_sided(part(series, begin, k), part(series, k, end));
    if (best.index == 0 || p < best.p_value) best = {k, p};
  }
  best.p_value = std::min(1.0, best.p_value * static_cast<double>(candidates));
  const double before = median(part(series, begin, best.index));
  const double after = median(part(series, best.index, end));
  const bool large_enough = before > 0 && std::fabs(after / before - 1.0) >= options.min_change;
  if (best.p_value >= options.alpha || !large_enough) return {};
  return best;
}

void segment(const std::vector<double>& series, size_t begin, size_t end,
             const ChangePointOptions& options, std::vector<Split>& found) {
  const Split split = best_split(series, begin, end, options);
  if (split.index == 0) return;
  found.push_back(split);
  segment(series, begin, split.index, options, found);
  segment(series, split.index, end, options, found);
}

}  // namespace

std::vector<ChangePoint> find_change_points(const std::vector<double>& series,
                                            const ChangePointOptions& options) {
  std::vector<Split> splits;
  segment(series, 0, series.size(), options, splits);
  std::sort(splits.begin(), splits.end(),
            [](const Split& a, const Split& b) { return a.index < b.index; });
  std::vector<ChangePoint> points;
  for (size_t i = 0; i < splits.size(); ++i) {
    const size_t begin = i == 0 ? 0 : splits[i - 1].index;
    const size_t end = i + 1 == splits.size() ? series.size() : splits[i + 1].index;
    ChangePoint point;
    point.index = splits[i].index;
    point.before = median(part(series, begin, point.index));
    point.after = median(part(series, point.index, end));
    point.change = point.after / point.before - 1.0;
    point.p_value = splits[i].p_value;
    points.push_back(point);
  }
  return points;
}

}  // namespace gpubench
