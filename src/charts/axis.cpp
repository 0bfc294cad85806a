#include "charts/axis.h"

#include <algorithm>
#include <cmath>

#include "common/text_table.h"

namespace gpubench::charts {
namespace {

// The round step nearest above `rough`: 1, 2, 2.5 or 5 times a power of ten.
double round_step(double rough) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  for (double multiple : {1.0, 2.0, 2.5, 5.0}) {
    if (multiple * magnitude >= rough * (1 - 1e-9)) return multiple * magnitude;
  }
  return 10 * magnitude;
}

// 1.5k, 18k, 2.5M: a large tick's label in few characters.
std::string short_number(double value, int decimals) {
  const double size = std::fabs(value);
  if (size >= 1e6) return format_fixed(value / 1e6, size >= 1e7 ? 0 : 1) + "M";
  if (size >= 1e4) return format_fixed(value / 1e3, 0) + "k";
  return format_fixed(value, decimals);
}

}  // namespace

double Axis::fraction(double value) const {
  double at;
  if (log) {
    at = value > 0 ? (std::log10(value) - std::log10(low)) / (std::log10(high) - std::log10(low))
                   : 0.0;
  } else {
    at = (value - low) / (high - low);
  }
  return std::isfinite(at) ? std::clamp(at, 0.0, 1.0) : 0.0;
}

std::string Axis::label(double value) const {
  if (log)
    return short_number(value, value < 1 ? static_cast<int>(-std::floor(std::log10(value))) : 0);
  int decimals = 0;  // as many as the step has: 0.25 takes 2
  while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) -
                                   std::round(step * std::pow(10.0, decimals))) > 1e-6) {
    ++decimals;
  }
  return short_number(std::fabs(value) < step * 1e-6 ? 0.0 : value, decimals);
}

Axis linear_axis(double low, double high, bool from_zero, int ticks) {
  if (!std::isfinite(low) || !std::isfinite(high)) low = 0, high = 1;
  if (low > high) std::swap(low, high);
  if (from_zero && low >= 0) low = 0;
  if (high - low < 1e-12 * std::max(1.0, std::fabs(high))) {
    const double pad = std::fabs(high) > 0 ? std::fabs(high) * 0.1 : 1.0;
    low = low >= 0 ? std::max(low - pad, 0.0) : low - pad;
    high += pad;
  }
  Axis axis;
  axis.step = round_step((high - low) / std::max(ticks - 1, 1));
  axis.low = std::floor(low / axis.step + 1e-9) * axis.step;
  axis.high = std::ceil(high / axis.step - 1e-9) * axis.step;
  if (axis.high <= axis.low) axis.high = axis.low + axis.step;
  // Ticks by count, not by adding the step: a step below the values' resolution never ends.
  const double count = std::min(std::round((axis.high - axis.low) / axis.step), 1000.0);
  for (int i = 0; i <= static_cast<int>(count); ++i) {
    const double tick = axis.low + axis.step * i;
    axis.ticks.push_back(std::fabs(tick) < axis.step * 1e-6 ? 0.0 : tick);
  }
  return axis;
}

Axis log_axis(double low, double high) {
  Axis axis;
  axis.log = true;
  const int first = static_cast<int>(std::floor(std::log10(low) + 1e-9));
  const int last = std::max(static_cast<int>(std::ceil(std::log10(high) - 1e-9)), first + 1);
  axis.low = std::pow(10.0, first);
  axis.high = std::pow(10.0, last);
  for (int decade = first; decade <= last; ++decade) {
    const double base = std::pow(10.0, decade);
    axis.ticks.push_back(base);
    if (decade == last || high / low > 100 * (1 + 1e-9)) continue;
    axis.ticks.push_back(2 * base);
    axis.ticks.push_back(5 * base);
  }
  return axis;
}

bool spans_decades(double low, double high) {
  return low > 0 && std::isfinite(high) && high / low >= 100;
}

Axis value_axis(double low, double high) {
  return spans_decades(low, high) ? log_axis(low, high) : linear_axis(0, high, true);
}

}  // namespace gpubench::charts
