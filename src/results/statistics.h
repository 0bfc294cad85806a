#pragma once

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

struct WelchTest {
  double t = 0;
  double degrees_of_freedom = 0;
  double p_value = 1;  // one-sided: evidence that mean(a) > mean(b)
};

// Welch's unequal-variance t-test of H1: mean(a) > mean(b). Needs two or more values on each
// side; with zero spread on both sides p is 0 when mean(a) > mean(b) and 1 otherwise.
WelchTest welch_t_test_greater(const std::vector<double>& a, const std::vector<double>& b);

// exp(mean(log x)); 0 for an empty input.
double geometric_mean(const std::vector<double>& values);

}  // namespace gpubench
