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

}  // namespace gpubench
