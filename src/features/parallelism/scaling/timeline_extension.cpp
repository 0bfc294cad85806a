#include "features/parallelism/scaling/timeline_extension.h"

#include <algorithm>
#include <map>

#include "common/errors.h"
#include "common/text_table.h"
#include "features/parallelism/scaling/bucket_rule.h"
#include "results/statistics.h"

namespace gpubench {
namespace {

struct TimedGradient {
  int64_t bytes;
  double ready_ms;
};

// The measured gradients in backward order, split: the head (block -1 before any block), each
// block's, and the rest (block -1 after the blocks).
struct SplitTimeline {
  std::vector<TimedGradient> head, tail;
  std::map<int64_t, std::vector<TimedGradient>> blocks;
};

SplitTimeline split_by_block(const StepTimelineInfo& t) {
  const size_t n = t.parameter_blocks.size();
  if (n != t.bucket_bytes.size() || n != t.bucket_ready_ms.size()) {
    throw UsageError("the timeline's parameter_blocks must list one block per bucket");
  }
  SplitTimeline split;
  for (size_t i = 0; i < n; ++i) {
    const TimedGradient g{t.bucket_bytes[i], t.bucket_ready_ms[i]};
    if (t.parameter_blocks[i] >= 0) {
      split.blocks[t.parameter_blocks[i]].push_back(g);
    } else {
      (split.blocks.empty() ? split.head : split.tail).push_back(g);
    }
  }
  if (split.blocks.size() < 2) {
    throw UsageError("the timeline has " + std::to_string(split.blocks.size()) +
                     " block: extending it needs two or more (train --blocks 2)");
  }
  return split;
}

// The median over the parameters of the time between the same parameter in consecutive blocks
// (a lower block is ready later in backward).
double block_period(const std::map<int64_t, std::vector<TimedGradient>>& blocks) {
  std::vector<double> periods;
  for (auto upper = std::next(blocks.begin()); upper != blocks.end(); ++upper) {
    const auto& later = std::prev(upper)->second;
    if (later.size() != upper->second.size()) {
      throw UsageError("the timeline's blocks differ in their parameters: cannot extend it");
    }
    for (size_t k = 0; k < later.size(); ++k) {
      periods.push_back(later[k].ready_ms - upper->second[k].ready_ms);
    }
  }
  return std::max(0.0, median(periods));
}

// DDP's buckets of `order` at `cap`: each bucket's bytes and when its last gradient is ready.
void group_into_buckets(const std::vector<TimedGradient>& order, int64_t cap, StepTimelineInfo& x) {
  std::vector<BucketedGradient> sizes;
  for (const TimedGradient& g : order) sizes.push_back({g.bytes, 0});
  const std::vector<size_t> bucket_of = bucket_of_gradients(sizes, cap);
  x.bucket_cap_bytes = cap;
  x.first_bucket_cap_bytes = std::min(kFirstBucketBytes, cap);
  x.bucket_bytes.clear();
  x.bucket_ready_ms.clear();
  for (size_t i = 0; i < order.size(); ++i) {
    if (bucket_of[i] == x.bucket_bytes.size()) {
      x.bucket_bytes.push_back(0);
      x.bucket_ready_ms.push_back(0);
    }
    x.bucket_bytes.back() += order[i].bytes;
    x.bucket_ready_ms.back() = std::max(x.bucket_ready_ms.back(), order[i].ready_ms);
  }
}

}  // namespace

ExtendedTimeline extend_timeline(const StepTimelineInfo& t, double step_ms,
                                 int64_t bucket_cap_bytes) {
  const SplitTimeline split = split_by_block(t);
  const int64_t built = static_cast<int64_t>(split.blocks.size());
  const int64_t whole = std::max(t.model_blocks, built);
  const double period = block_period(split.blocks);
  const double added = period * static_cast<double>(whole - built);

  // Backward order: the head, the measured blocks from the last down, the missing blocks after
  // the lowest one a period apart, then the rest.
  std::vector<TimedGradient> order = split.head;
  for (auto it = split.blocks.rbegin(); it != split.blocks.rend(); ++it) {
    order.insert(order.end(), it->second.begin(), it->second.end());
  }
  const std::vector<TimedGradient>& lowest = split.blocks.begin()->second;
  for (int64_t extra = 1; extra <= whole - built; ++extra) {
    for (const TimedGradient& g : lowest) {
      order.push_back({g.bytes, g.ready_ms + period * static_cast<double>(extra)});
    }
  }
  for (const TimedGradient& g : split.tail) order.push_back({g.bytes, g.ready_ms + added});

  ExtendedTimeline out;
  StepTimelineInfo& x = out.timeline;
  x = t;
  x.parameter_blocks.clear();
  group_into_buckets(order, bucket_cap_bytes, x);
  x.backward_ms = t.backward_ms + added;
  x.forward_ms = t.backward_ms > 0 ? t.forward_ms * x.backward_ms / t.backward_ms : t.forward_ms;
  const double measured_bytes = static_cast<double>(t.gradient_bytes());
  x.optimizer_ms = measured_bytes > 0
                       ? t.optimizer_ms * static_cast<double>(x.gradient_bytes()) / measured_bytes
                       : 0;
  const double other =
      std::max(0.0, step_ms - t.forward_ms - t.backward_ms - t.gradient_sync_ms - t.optimizer_ms);
  out.step_ms = other + x.forward_ms + x.backward_ms + x.gradient_sync_ms + x.optimizer_ms;
  out.how = "extended from " + std::to_string(built) + " to " + std::to_string(whole) +
            " blocks: a block's backward " + format_fixed(period, 3) +
            " ms (median over its parameters), the forward pass scaled with backward, the "
            "optimiser with the gradient bytes; step " +
            format_fixed(step_ms, 2) + " -> " + format_fixed(out.step_ms, 2) + " ms";
  return out;
}

}  // namespace gpubench
