#include "reporting/change_points.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

// A trial's value and the night it belongs to.
struct Trial {
  double value = 0;
  size_t night = 0;
};

// Two-sided p of the rank-sum test of the trials of the nights before `split` against those
// from it, within nights [begin, end) less `left_out` (an index outside the range: none). The
// variance under no change is inflated by the design effect of trials clustered in nights,
// 1 + (k - 1) x ICC, k the trials per night and ICC the correlation of ranks within a night,
// estimated by one-way analysis of variance within each side (so the step itself is not taken
// for night-to-night noise).
double clustered_rank_sum_p(const std::vector<std::vector<double>>& nights, size_t begin,
                            size_t split, size_t end, size_t left_out) {
  std::vector<Trial> trials;
  for (size_t night = begin; night < end; ++night) {
    if (night == left_out) continue;
    for (double value : nights[night]) trials.push_back({value, night});
  }
  const size_t n = trials.size();
  if (n < 2) return 1;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return trials[a].value < trials[b].value; });
  std::vector<double> rank(n);
  double ties = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && trials[order[j + 1]].value == trials[order[i]].value) ++j;
    const double tied = static_cast<double>(j - i + 1);
    for (size_t k = i; k <= j; ++k) rank[order[k]] = 0.5 * static_cast<double>(i + j) + 1.0;
    ties += tied * tied * tied - tied;
    i = j + 1;
  }
  // Rank sums per night, and the sides' sizes and rank sums.
  std::vector<double> night_sum(end - begin, 0.0), night_count(end - begin, 0.0);
  double left_n = 0, right_n = 0, left_sum = 0, right_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t at = trials[i].night - begin;
    night_sum[at] += rank[i];
    night_count[at] += 1;
    (trials[i].night < split ? left_n : right_n) += 1;
    (trials[i].night < split ? left_sum : right_sum) += rank[i];
  }
  if (left_n == 0 || right_n == 0) return 1;
  // Within each side: between-night and within-night sums of squares of the ranks.
  double between = 0, within = 0, groups = 0;
  for (size_t at = 0; at < night_sum.size(); ++at) {
    if (night_count[at] == 0) continue;
    const double side_mean = begin + at < split ? left_sum / left_n : right_sum / right_n;
    const double night_mean = night_sum[at] / night_count[at];
    between += night_count[at] * (night_mean - side_mean) * (night_mean - side_mean);
    groups += 1;
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t at = trials[i].night - begin;
    const double d = rank[i] - night_sum[at] / night_count[at];
    within += d * d;
  }
  const double df_between = groups - 2, df_within = static_cast<double>(n) - groups;
  const double per_night = static_cast<double>(n) / groups;
  double icc = 0;
  // Applied where the nights' ranks differ more than their trials' do (an F test at 5 %): an
  // estimate from a few nights is noisy, and taken at face value when there is no clustering
  // it would throw away the power of the trials at random.
  if (df_between > 0 && df_within > 0 && per_night > 1) {
    const double ms_between = between / df_between, ms_within = within / df_within;
    const bool clustered =
        ms_within <= 0 ||
        f_distribution_upper_tail(ms_between / ms_within, df_between, df_within) < 0.05;
    const double night_variance = std::max(0.0, (ms_between - ms_within) / per_night);
    if (clustered && night_variance + ms_within > 0) {
      icc = night_variance / (night_variance + ms_within);
    }
  }
  const double design_effect = 1 + (per_night - 1) * icc;
  const double total = left_n + right_n;
  const double u = left_sum - left_n * (left_n + 1) / 2;
  const double variance =
      left_n * right_n / 12.0 * ((total + 1) - ties / (total * (total - 1))) * design_effect;
  if (variance <= 0) return 1;
  const double z = std::max(0.0, std::fabs(u - left_n * right_n / 2) - 0.5) / std::sqrt(variance);
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

// The trials of the nights, when some night has more than one; empty otherwise (the nights'
// medians are then all there is to test).
using Nights = std::vector<std::vector<double>>;

// The best split of [begin, end) when it passes the rule, else nothing (index 0). Where: the
// split that leaves the least absolute deviation from the two sides' medians (nights of one
// value), or whose trials' clustered rank-sum test is strongest (nights of several). Whether:
// that rank-sum test (for trials, the largest p with every one night left out in turn), times
// the number of candidate splits (Bonferroni), is below alpha, and the medians differ by
// min_change or more.
Split best_split(const std::vector<double>& series, const Nights& nights, size_t begin, size_t end,
                 const ChangePointOptions& options) {
  const size_t m = std::max<size_t>(options.min_segment, 1);
  if (end - begin < 2 * m) return {};
  const size_t candidates = end - begin - 2 * m + 1;
  Split best;
  double p = 1;
  if (nights.empty()) {
    double best_cost = 0;
    for (size_t k = begin + m; k + m <= end; ++k) {
      const double cost =
          absolute_deviation(part(series, begin, k)) + absolute_deviation(part(series, k, end));
      if (best.index == 0 || cost < best_cost) best = {k, 1}, best_cost = cost;
    }
    p = rank_sum_p(ranks_of(series, begin, end), best.index - begin, end - best.index);
  } else {
    // Where: the split whose trials' clustered rank-sum test is strongest (Pettitt's rank
    // statistic, on the trials); whether: that test with every one night left out in turn.
    for (size_t k = begin + m; k + m <= end; ++k) {
      const double at_k = clustered_rank_sum_p(nights, begin, k, end, end);
      if (best.index == 0 || at_k < p) best = {k, 1}, p = at_k;
    }
    for (size_t out = begin; out < end && p * static_cast<double>(candidates) < options.alpha;
         ++out) {
      p = std::max(p, clustered_rank_sum_p(nights, begin, best.index, end, out));
    }
  }
  best.p_value = std::min(1.0, p * static_cast<double>(candidates));
  const double before = median(part(series, begin, best.index));
  const double after = median(part(series, best.index, end));
  const bool large_enough = before > 0 && std::fabs(after / before - 1.0) >= options.min_change;
  if (best.p_value >= options.alpha || !large_enough) return {};
  return best;
}

void segment(const std::vector<double>& series, const Nights& nights, size_t begin, size_t end,
             const ChangePointOptions& options, std::vector<Split>& found) {
  const Split split = best_split(series, nights, begin, end, options);
  if (split.index == 0) return;
  found.push_back(split);
  segment(series, nights, begin, split.index, options, found);
  segment(series, nights, split.index, end, options, found);
}

std::vector<ChangePoint> change_points_of(const std::vector<double>& series, const Nights& nights,
                                          const ChangePointOptions& options) {
  std::vector<Split> splits;
  segment(series, nights, 0, series.size(), options, splits);
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

}  // namespace

std::vector<ChangePoint> find_change_points(const std::vector<double>& series,
                                            const ChangePointOptions& options) {
  return change_points_of(series, {}, options);
}

std::vector<ChangePoint> find_night_change_points(const std::vector<std::vector<double>>& nights,
                                                  const ChangePointOptions& options) {
  std::vector<double> medians;
  bool several = false;
  for (const std::vector<double>& trials : nights) {
    medians.push_back(trials.empty() ? NAN : median(trials));
    several = several || trials.size() > 1;
  }
  return change_points_of(medians, several ? nights : Nights{}, options);
}

}  // namespace gpubench
