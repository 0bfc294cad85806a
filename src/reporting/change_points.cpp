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

// Ranks (1-based, ties averaged) of series[begin, end), and the tie correction of the rank-sum
// test's variance: sum over groups of tied values of (t^3 - t).
struct Ranks {
  std::vector<double> prefix;  // prefix[i]: the sum of the first i ranks, in series order
  double ties = 0;
};

Ranks ranks_of(const std::vector<double>& series, size_t begin, size_t end) {
  const size_t n = end - begin;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return series[begin + a] < series[begin + b]; });
  std::vector<double> rank(n);
  Ranks ranks;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && series[begin + order[j + 1]] == series[begin + order[i]]) ++j;
    const double tied = static_cast<double>(j - i + 1);
    for (size_t k = i; k <= j; ++k) rank[order[k]] = 0.5 * static_cast<double>(i + j) + 1.0;
    ranks.ties += tied * tied * tied - tied;
    i = j + 1;
  }
  ranks.prefix.assign(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) ranks.prefix[i + 1] = ranks.prefix[i] + rank[i];
  return ranks;
}

// Up to this many values in a segment the rank-sum test's p is exact; above, the normal
// approximation (with continuity and tie corrections) is close, and conservative in the far
// tail when one side is short (the exact distribution is bounded).
constexpr size_t kExactRankSumUpTo = 60;

// P(U <= u) and P(U >= u) of the rank-sum statistic U of m values against n, under no change:
// the rank sums of every m-subset of 1..m+n, counted.
std::pair<double, double> exact_rank_sum_tails(size_t m, size_t n, double u) {
  const size_t total = m + n;
  const size_t max_sum = m * (2 * total - m + 1) / 2;
  std::vector<std::vector<double>> ways(m + 1, std::vector<double>(max_sum + 1, 0.0));
  ways[0][0] = 1;
  for (size_t rank = 1; rank <= total; ++rank) {
    for (size_t j = std::min(rank, m); j >= 1; --j) {
      for (size_t sum = max_sum; sum >= rank; --sum) ways[j][sum] += ways[j - 1][sum - rank];
    }
  }
  const double offset = static_cast<double>(m * (m + 1) / 2);
  double below = 0, above = 0, all = 0;
  for (size_t sum = 0; sum <= max_sum; ++sum) {
    const double count = ways[m][sum], value = static_cast<double>(sum) - offset;
    all += count;
    if (value <= u + 1e-9) below += count;
    if (value >= u - 1e-9) above += count;
  }
  return {below / all, above / all};
}

// Two-sided p of the Mann-Whitney (Wilcoxon rank-sum) test of the first m values of a segment
// against the other n.
double rank_sum_p(const Ranks& ranks, size_t m, size_t n) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), total = dm + dn;
  const double u = ranks.prefix[m] - dm * (dm + 1) / 2;
  if (m + n <= kExactRankSumUpTo) {
    // The shorter side's statistic has the same two-sided p and a smaller table.
    const auto [below, above] =
        m <= n ? exact_rank_sum_tails(m, n, u) : exact_rank_sum_tails(n, m, dm * dn - u);
    return std::min(1.0, 2.0 * std::min(below, above));
  }
  const double variance = dm * dn / 12.0 * ((total + 1) - ranks.ties / (total * (total - 1)));
  if (variance <= 0) return 1;
  const double z = std::max(0.0, std::fabs(u - dm * dn / 2) - 0.5) / std::sqrt(variance);
  return std::erfc(z / std::sqrt(2.0));
}

// Sum of absolute deviations from the median: a segment's cost, which one outlier cannot
// dominate as it does a sum of squares.
double absolute_deviation(std::vector<double> values) {
  const double middle = median(values);
  double cost = 0;
  for (double v : values) cost += std::fabs(v - middle);
  return cost;
}

// The best split of [begin, end) when it passes the rule, else nothing (index 0). Where: the
// split that leaves the least absolute deviation from the two sides' medians. Whether: the
// rank-sum test of the two sides there, times the number of candidate splits (Bonferroni), is
// below alpha, and the medians differ by min_change or more.
Split best_split(const std::vector<double>& series, size_t begin, size_t end,
                 const ChangePointOptions& options) {
  const size_t m = std::max<size_t>(options.min_segment, 1);
  if (end - begin < 2 * m) return {};
  const size_t candidates = end - begin - 2 * m + 1;
  Split best;
  double best_cost = 0;
  for (size_t k = begin + m; k + m <= end; ++k) {
    const double cost =
        absolute_deviation(part(series, begin, k)) + absolute_deviation(part(series, k, end));
    if (best.index == 0 || cost < best_cost) best = {k, 1}, best_cost = cost;
  }
  const Ranks ranks = ranks_of(series, begin, end);
  best.p_value = std::min(1.0, rank_sum_p(ranks, best.index - begin, end - best.index) *
                                   static_cast<double>(candidates));
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
