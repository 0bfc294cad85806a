#include "results/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpubench {

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = fraction * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<size_t>(std::floor(position));
  const size_t upper = std::min(lower + 1, values.size() - 1);
  const double weight = position - static_cast<double>(lower);
  return values[lower] + weight * (values[upper] - values[lower]);
}

double median(std::vector<double> values) {
  return percentile(std::move(values), 0.5);
}

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  s.median = percentile(values, 0.5);
  s.p5 = percentile(values, 0.05);
  s.p95 = percentile(values, 0.95);
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return s;
}

namespace {

// Continued fraction for the regularised incomplete beta function (Numerical Recipes, betacf).
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 300;
  constexpr double kEpsilon = 1e-14;
  constexpr double kTiny = 1e-300;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEpsilon) break;
  }
  return h;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log(1.0 - x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

double sample_variance(const std::vector<double>& values, double mean) {
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return squares / static_cast<double>(values.size() - 1);
}

}  // namespace

double student_t_cdf(double t, double dof) {
  const double tail = 0.5 * regularized_incomplete_beta(dof / 2.0, 0.5, dof / (dof + t * t));
  return t >= 0 ? 1.0 - tail : tail;
}

double f_distribution_upper_tail(double f, double d1, double d2) {
  if (!(f > 0)) return 1.0;
  return regularized_incomplete_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f));
}

WelchTest welch_t_test_greater(const std::vector<double>& a, const std::vector<double>& b) {
  WelchTest test;
  if (a.size() < 2 || b.size() < 2) return test;
  const double mean_a = std::accumulate(a.begin(), a.end(), 0.0) / static_cast<double>(a.size());
  const double mean_b = std::accumulate(b.begin(), b.end(), 0.0) / static_cast<double>(b.size());
  const double va = sample_variance(a, mean_a) / static_cast<double>(a.size());
  const double vb = sample_variance(b, mean_b) / static_cast<double>(b.size());
  if (va + vb == 0) {
    test.p_value = mean_a > mean_b ? 0.0 : 1.0;
    return test;
  }
  test.t = (mean_a - mean_b) / std::sqrt(va + vb);
  test.degrees_of_freedom =
      (va + vb) * (va + vb) /
      (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  test.p_value = 1.0 - student_t_cdf(test.t, test.degrees_of_freedom);
  return test;
}

double welch_t_test_two_sided(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return 1;
  const double smaller =
      std::min(welch_t_test_greater(a, b).p_value, welch_t_test_greater(b, a).p_value);
  return std::min(1.0, 2.0 * smaller);
}

double student_t_quantile(double p, double dof) {
  // student_t_cdf is increasing in t: bisect, after widening the bracket until it holds p.
  double low = -1, high = 1;
  while (student_t_cdf(low, dof) > p && low > -1e12) low *= 2;
  while (student_t_cdf(high, dof) < p && high < 1e12) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * std::max(1.0, std::fabs(high)); ++i) {
    const double middle = 0.5 * (low + high);
    (student_t_cdf(middle, dof) < p ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

double detectable_difference(const Sample& a, const Sample& b, double alpha, double power) {
  if (a.count < 2 || b.count < 2) return std::nan("");
  const double va = a.stdev * a.stdev / static_cast<double>(a.count);
  const double vb = b.stdev * b.stdev / static_cast<double>(b.count);
  if (va + vb == 0) return 0;
  const double dof =
      (va + vb) * (va + vb) /
      (va * va / static_cast<double>(a.count - 1) + vb * vb / static_cast<double>(b.count - 1));
  return (student_t_quantile(1.0 - alpha, dof) + student_t_quantile(power, dof)) *
         std::sqrt(va + vb);
}

size_t trials_to_detect(double difference, double stdev_a, double stdev_b, double alpha,
                        double power, size_t max_count) {
  // The detectable difference shrinks as n grows: bisect for the first n that is enough.
  const auto enough = [&](size_t n) {
    return detectable_difference({stdev_a, n}, {stdev_b, n}, alpha, power) <= difference;
  };
  if (max_count < 2 || !enough(max_count)) return 0;
  size_t low = 1, high = max_count;  // enough(high) holds; low = 1 stands for "not enough"
  while (high - low > 1) {
    const size_t middle = low + (high - low) / 2;
    (enough(middle) ? high : low) = middle;
  }
  return high;
}

double coefficient_of_variation(const std::vector<double>& values) {
  if (values.size() < 2) return std::nan("");
  const Summary s = summarize(values);
  return s.mean > 0 ? s.stdev / s.mean : std::nan("");
}

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace gpubench
