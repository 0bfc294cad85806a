#pragma once

#include <cstddef>
#include <vector>

namespace gpubench {

struct Summary {
  double median = 0, mean = 0, p5 = 0, p95 = 0, stdev = 0, min = 0, max = 0;
};

// Percentiles interpolate linearly between order statistics (numpy's default);
// stdev is the sample standard deviation (n - 1). An empty input gives all zeros.
Summary summarize(std::vector<double> values);
double percentile(std::vector<double> values, double fraction);
double median(std::vector<double> values);

// P(T <= t) for Student's t distribution with `dof` degrees of freedom (dof > 0, not integral).
double student_t_cdf(double t, double dof);
// P(F > f) for the F distribution with d1 and d2 degrees of freedom (f >= 0, d1, d2 > 0).
double f_distribution_upper_tail(double f, double d1, double d2);

struct WelchTest {
  double t = 0;
  double degrees_of_freedom = 0;
  double p_value = 1;  // one-sided: evidence that mean(a) > mean(b)
};

// Welch's unequal-variance t-test of H1: mean(a) > mean(b). Needs two or more values on each
// side; with zero spread on both sides p is 0 when mean(a) > mean(b) and 1 otherwise.
WelchTest welch_t_test_greater(const std::vector<double>& a, const std::vector<double>& b);

// Two-sided: evidence that the means differ (2 x the smaller one-sided p, at most 1).
double welch_t_test_two_sided(const std::vector<double>& a, const std::vector<double>& b);

// The t with P(T <= t) = p for Student's t with `dof` degrees of freedom (0 < p < 1, dof > 0).
double student_t_quantile(double p, double dof);

// The spread and size of one side of a comparison.
struct Sample {
  double stdev = 0;
  size_t count = 0;
};

// The smallest difference in means that a one-sided Welch t-test at `alpha` finds with
// probability `power`, for two sides of these spreads and sizes (the normal-theory power
// calculation with Student's t in place of the normal):
//   (t[1 - alpha, v] + t[power, v]) * sqrt(sa^2 / na + sb^2 / nb),
// v the Welch-Satterthwaite degrees of freedom. 0 when neither side has any spread; NaN when a
// side has fewer than two values (its spread is unknown).
double detectable_difference(const Sample& a, const Sample& b, double alpha, double power);

// The smallest trial count n, the same on both sides, from 2 to `max_count`, at which
// detectable_difference with these spreads is at most `difference`; 0 when even max_count is
// not enough.
size_t trials_to_detect(double difference, double stdev_a, double stdev_b, double alpha,
                        double power, size_t max_count = 1000);

// stdev / mean: the trials' spread as a fraction; NaN for fewer than two values or a mean that
// is not positive.
double coefficient_of_variation(const std::vector<double>& values);

// exp(mean(log x)); 0 for an empty input.
double geometric_mean(const std::vector<double>& values);

}  // namespace gpubench
