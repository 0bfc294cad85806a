#include "memory/fit_prediction.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "settings/setting_values.h"

namespace gpubench {

double BatchSeqFit::at(int64_t batch, int64_t seq) const {
  const double t = seq > 0 ? static_cast<double>(seq) : 1.0;
  return fixed + fixed_linear * t + fixed_quadratic * t * t +
         static_cast<double>(batch) * (item + linear * t + quadratic * t * t);
}

namespace {

struct Line {
  double constant = 0, linear = 0;
};

// The line through the two longest of (t[i], f[i]), i = 0..2, t ascending; where it falls, flat at
// the largest value (BatchSeqFit::from_three_lengths).
Line rising_line(const double (&t)[3], const double (&f)[3]) {
  const double slope = (f[2] - f[1]) / (t[2] - t[1]);
  if (slope >= 0) return {f[2] - slope * t[2], slope};
  return {std::max({f[0], f[1], f[2]}), 0};
}

}  // namespace

BatchSeqFit BatchSeqFit::from_three_lengths(const std::vector<Point>& points) {
  // X by length at the smaller batch and at the larger.
  std::map<int64_t, std::map<int64_t, double>> by_batch;
  for (const Point& point : points) by_batch[point.batch][point.seq] = point.value;
  if (by_batch.size() != 2 || by_batch.begin()->second.size() != 3 ||
      by_batch.rbegin()->second.size() != 3) {
    throw std::logic_error("from_three_lengths takes two batches at three lengths");
  }
  const auto& [small, at_small] = *by_batch.begin();
  const auto& [large, at_large] = *by_batch.rbegin();
  double t[3], once[3], per_item[3];
  int i = 0;
  for (const auto& [seq, value] : at_small) {
    t[i] = static_cast<double>(seq);
    per_item[i] = (at_large.at(seq) - value) / static_cast<double>(large - small);
    once[i] = value - static_cast<double>(small) * per_item[i];
    ++i;
  }
  const Line item = rising_line(t, per_item), fixed = rising_line(t, once);
  BatchSeqFit fit;
  fit.item = item.constant;
  fit.linear = item.linear;
  fit.fixed = fixed.constant;
  fit.fixed_linear = fixed.linear;
  return fit;
}

BatchSeqFit BatchSeqFit::from(const std::vector<Point>& p, bool for_peak) {
  BatchSeqFit fit;
  // By length: X at batch 1, and what one more item adds where a second batch was probed too.
  // The batches are 1 and 2, or for a model that trains from a larger batch only (SSD300: 2),
  // that batch and twice it, whose X at batch 1 is extrapolated.
  int64_t small = p.front().batch, large = p.front().batch;
  for (const Point& point : p) {
    small = std::min(small, point.batch);
    large = std::max(large, point.batch);
  }
  std::map<int64_t, double> at_small, at_1, per_item;
  for (const Point& point : p) {
    if (point.batch == small) at_small[point.seq] = point.value;
  }
  for (const Point& point : p) {
    if (point.batch != large) continue;
    per_item[point.seq] =
        (point.value - at_small.at(point.seq)) / static_cast<double>(large - small);
    at_1[point.seq] = at_small.at(point.seq) - static_cast<double>(small - 1) * per_item[point.seq];
  }
  if (small == 1) {
    for (const auto& [seq, value] : at_small) at_1.emplace(seq, value);
  }
  if (at_1.size() == 1) {  // one length (or none): fixed + batch * linear
    const double t = std::max<int64_t>(1, per_item.begin()->first);
    fit.linear = per_item.begin()->second / t;
    fit.fixed = at_1.begin()->second - per_item.begin()->second;
    return fit;
  }
  // Per item: linear s + quadratic s^2 through the two lengths probed at both batches.
  const auto [t1, item1] = *per_item.begin();
  const auto [t2, item2] = *per_item.rbegin();
  const double per_token1 = item1 / static_cast<double>(t1);
  const double per_token2 = item2 / static_cast<double>(t2);
  fit.quadratic = (per_token2 - per_token1) / static_cast<double>(t2 - t1);
  fit.linear = per_token1 - fit.quadratic * static_cast<double>(t1);
  if (fit.quadratic < 0 || for_peak) {
    fit.quadratic = 0;
    fit.linear = std::max(per_token1, per_token2);
  }
  // A peak's extra above the activations never shrinks with the batch: where the probes' largest
  // moment stays put while the activations grow (a block's, at a narrowed vocabulary), the extra
  // is fixed, not extrapolated below zero at the run's size.
  if (for_peak) fit.linear = std::max(0.0, fit.linear);
  // Fixed: a parabola through its value at the three lengths (batch 1 less one item), or for a
  // peak its value at the longest.
  std::vector<double> t, f;
  for (const auto& [seq, value] : at_1) {
    t.push_back(static_cast<double>(seq));
    f.push_back(value - fit.linear * t.back() - fit.quadratic * t.back() * t.back());
  }
  if (for_peak) {
    fit.fixed = f.back();
    return fit;
  }
  const double slope01 = (f[1] - f[0]) / (t[1] - t[0]), slope12 = (f[2] - f[1]) / (t[2] - t[1]);
  fit.fixed_quadratic = (slope12 - slope01) / (t[2] - t[0]);
  fit.fixed_linear = slope01 - fit.fixed_quadratic * (t[0] + t[1]);
  fit.fixed = f[0] - fit.fixed_linear * t[0] - fit.fixed_quadratic * t[0] * t[0];
  if (fit.fixed_quadratic < 0) {  // the steeper line, through the largest value at the longest
    fit.fixed_quadratic = 0;
    fit.fixed_linear = std::max({0.0, slope01, slope12});
    fit.fixed = *std::max_element(f.begin(), f.end()) - fit.fixed_linear * t[2];
  }
  return fit;
}

double extended_figure(double base, double blocks, double t, double vocab, double u,
                       bool for_peak) {
  const double per_vocab = for_peak ? std::max(0.0, vocab - base) : vocab - base;
  return base + t * (blocks - base) + u * per_vocab;
}

BatchSeqFit BatchSeqFit::extended(const BatchSeqFit& a, const BatchSeqFit& b, double t,
                                  const BatchSeqFit& c, double u, bool for_peak) {
  auto plane = [t, u, for_peak](double base, double blocks, double vocab) {
    return extended_figure(base, blocks, t, vocab, u, for_peak);
  };
  return {plane(a.fixed, b.fixed, c.fixed),
          plane(a.fixed_linear, b.fixed_linear, c.fixed_linear),
          plane(a.fixed_quadratic, b.fixed_quadratic, c.fixed_quadratic),
          plane(a.linear, b.linear, c.linear),
          plane(a.quadratic, b.quadratic, c.quadratic),
          plane(a.item, b.item, c.item)};
}

double widened_figure(double narrow, double twice, int64_t k, bool for_peak) {
  const double growth = for_peak ? std::max(0.0, twice - narrow) : twice - narrow;
  return narrow + static_cast<double>(k - 1) * growth;
}

double widened_square(double narrow, double twice, int64_t k) {
  // narrow = a/k + b/k^2, twice = 2a/k + 4b/k^2; the model's: a + b.
  const double square = (twice - 2 * narrow) / 2;  // b/k^2
  const double line = narrow - square;             // a/k
  const auto kk = static_cast<double>(k);
  return kk * line + kk * kk * square;
}

BatchSeqFit BatchSeqFit::on_line(const BatchSeqFit& at_n, const BatchSeqFit& at_twice, int64_t k,
                                 bool for_peak) {
  auto line = [k, for_peak](double a, double b) { return widened_figure(a, b, k, for_peak); };
  return {line(at_n.fixed, at_twice.fixed),
          line(at_n.fixed_linear, at_twice.fixed_linear),
          line(at_n.fixed_quadratic, at_twice.fixed_quadratic),
          line(at_n.linear, at_twice.linear),
          line(at_n.quadratic, at_twice.quadratic),
          line(at_n.item, at_twice.item)};
}

BatchSeqFit BatchSeqFit::widened(const BatchSeqFit& narrow, const BatchSeqFit& twice, int64_t k,
                                 bool for_peak) {
  BatchSeqFit fit = on_line(narrow, twice, k, for_peak);
  // What a step holds once whatever its batch and length: under autocast the 16-bit copies of
  // float32 weights that backward keeps, and their gradients, which grow with the weights.
  if (!for_peak) fit.fixed = widened_square(narrow.fixed, twice.fixed, k);
  return fit;
}

MemoryBreakdown MemoryFit::breakdown_at(int64_t batch) const {
  const int64_t seq = seq_len;
  MemoryBreakdown m;
  m.weights = weights;
  m.gradients = gradients;
  m.optimizer_states = optimizer_states;
  m.activations = std::max<int64_t>(0, std::llround(activations.at(batch, seq)));
  // The step's peak, taken as if every gradient were alive through backward (as where they are
  // zeroed instead of freed): the batch, every gradient, and the larger of backward's peak
  // above them (every activation and backward's temporaries) and the update's temporaries.
  // Where activations and gradients do not peak together this is above the run's peak by up to
  // the gradients; never below it.
  // A sharded step holds its master shards' gradients only as the activations go: its peak is
  // early in backward (every activation, no gradient yet) or at its end (every gradient, no
  // activation), each with the unsharded gradients of the units in hand.
  const double unit = static_cast<double>(sharded_unit_gradients);
  const double extra =
      backward_steepest ? std::max(backward_extra.at(batch, seq), backward_steepest->at(batch, seq))
                        : backward_extra.at(batch, seq);
  const double backward_start =
      activations.at(batch, seq) + extra + (unit > 0 ? unit - static_cast<double>(gradients) : 0.0);
  const double step = inputs.at(batch, seq) + static_cast<double>(gradients) +
                      std::max({backward_start, unit, static_cast<double>(gradient_peak_extra),
                                static_cast<double>(optimizer_workspace)});
  const int64_t total = weights + optimizer_states + std::llround(step);
  m.other = total - m.weights - m.gradients - m.optimizer_states - m.activations;
  return m;
}

int64_t MemoryFit::max_batch(int64_t capacity) const {
  return largest_fitting(largest_batch_size(),
                         [&](int64_t batch) { return peak_at(batch) <= capacity; });
}

int64_t largest_fitting(int64_t largest, const std::function<bool(int64_t)>& fits) {
  if (largest < 1 || !fits(1)) return 0;
  int64_t fitting = 1, failing = 2;
  while (failing <= largest && fits(failing)) {
    fitting = failing;
    failing *= 2;
  }
  if (failing > largest) {
    if (fitting == largest || fits(largest)) return largest;
    failing = largest;
  }
  while (failing - fitting > 1) {
    const int64_t middle = fitting + (failing - fitting) / 2;
    (fits(middle) ? fitting : failing) = middle;
  }
  return fitting;
}

}  // namespace gpubench
