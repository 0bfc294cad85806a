#include "train/step_timeline.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "distributed/gradient_buckets.h"
#include "results/statistics.h"

namespace gpubench {
namespace {

using Clock = std::chrono::steady_clock;

// Adds the time from its construction to its destruction to `total`.
class TimeInside {
 public:
  explicit TimeInside(Clock::duration& total) : total_(total), start_(Clock::now()) {}
  ~TimeInside() { total_ += Clock::now() - start_; }
  TimeInside(const TimeInside&) = delete;
  TimeInside& operator=(const TimeInside&) = delete;

 private:
  Clock::duration& total_;
  Clock::time_point start_;
};

constexpr int label_of(StepPoint point) {
  return static_cast<int>(point);
}

// One complete step's marks: the points' times and each bucket's, in ms after the step began.
struct StepMarks {
  double points[5] = {-1, -1, -1, -1, -1};
  std::vector<double> buckets;
};

}  // namespace

StepTimeline::StepTimeline(torch::Device device, const std::vector<torch::Tensor>& trainable,
                           int64_t bucket_bytes)
    : device_(device), bucket_cap_bytes_(bucket_bytes), marks_(device) {
  GradientBuckets layout = assign_gradient_buckets(trainable, bucket_bytes);
  parameters_ = std::move(layout.parameters);
  bucket_of_ = std::move(layout.bucket_of);
  bucket_bytes_ = std::move(layout.bytes);
  for (const auto& members : layout.members) bucket_sizes_.push_back(members.size());
  waiting_ = bucket_sizes_;
  arrived_.assign(parameters_.size(), false);
  for (size_t p = 0; p < parameters_.size(); ++p) {
    hooks_.push_back(
        parameters_[p].register_hook([this, p](const torch::Tensor&) { on_gradient(p); }));
  }
}

StepTimeline::StepTimeline(torch::Device device, const std::vector<torch::Tensor>& trainable,
                           const std::vector<int64_t>& block_of)
    : StepTimeline(device, trainable, /*bucket_bytes=*/0) {  // a cap of 0: a bucket a parameter
  std::map<const void*, int64_t> block_of_tensor;
  for (size_t i = 0; i < trainable.size() && i < block_of.size(); ++i) {
    block_of_tensor.emplace(trainable[i].unsafeGetTensorImpl(), block_of[i]);
  }
  for (const torch::Tensor& parameter : parameters_) {
    const auto found = block_of_tensor.find(parameter.unsafeGetTensorImpl());
    parameter_blocks_.push_back(found == block_of_tensor.end() ? -1 : found->second);
  }
}

int64_t block_of_parameter(const std::string& name) {
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('.', start), name.size());
    const std::string part = name.substr(start, end - start);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      return std::stoll(part);
    }
    start = end + 1;
  }
  return -1;
}

std::vector<int64_t> blocks_of_trainable(torch::nn::Module& module) {
  std::vector<int64_t> blocks;
  for (const auto& item : module.named_parameters()) {
    if (item.value().requires_grad()) blocks.push_back(block_of_parameter(item.key()));
  }
  return blocks;
}

StepTimeline::~StepTimeline() {
  for (size_t p = 0; p < parameters_.size(); ++p) parameters_[p].remove_hook(hooks_[p]);
}

void StepTimeline::record(int label) {
  marks_.mark();
  labels_.push_back(label);
}

void StepTimeline::mark(StepPoint point) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (paused_ || stopped_) return;
  TimeInside inside(inside_);
  if (point == StepPoint::kBegin) {
    in_step_ = true;
    ++steps_marked_;
    waiting_ = bucket_sizes_;
    std::fill(arrived_.begin(), arrived_.end(), false);
  }
  if (!in_step_) return;
  record(label_of(point));
  if (point == StepPoint::kEnd) in_step_ = false;
}

void StepTimeline::on_gradient(size_t parameter) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recording() || arrived_[parameter]) return;
  TimeInside inside(inside_);
  arrived_[parameter] = true;
  const size_t bucket = bucket_of_[parameter];
  if (--waiting_[bucket] == 0) record(kPointLabels + static_cast<int>(bucket));
}

void StepTimeline::set_paused(bool paused) {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = paused;
  in_step_ = false;
}

void StepTimeline::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
}

StepTimelineInfo StepTimeline::summary(size_t steps, const std::string& measured_over) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<double> times = marks_.take_ms();
  std::vector<StepMarks> complete;
  StepMarks open;
  double began = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    const int label = labels_[i];
    if (label == label_of(StepPoint::kBegin)) {
      open = StepMarks{};
      open.buckets.assign(bucket_bytes_.size(), -1);
      began = times[i];
    }
    if (label < kPointLabels) {
      open.points[label] = times[i] - began;
    } else {
      open.buckets[static_cast<size_t>(label - kPointLabels)] = times[i] - began;
    }
    if (label == label_of(StepPoint::kEnd) && open.points[label_of(StepPoint::kBegin)] >= 0) {
      complete.push_back(open);
    }
  }
  labels_.clear();
  if (complete.size() > steps) complete.erase(complete.begin(), complete.end() - steps);

  StepTimelineInfo info;
  info.clock = device_.is_cuda() ? "cuda events" : "host clock";
  info.measured_over = measured_over;
  info.steps = static_cast<int64_t>(complete.size());
  info.bucket_cap_bytes = bucket_cap_bytes_;
  info.first_bucket_cap_bytes = std::min(kFirstBucketBytes, bucket_cap_bytes_);
  info.bucket_bytes = bucket_bytes_;
  info.parameter_blocks = parameter_blocks_;
  if (complete.empty()) return info;
  std::vector<double> forward, backward, sync, optimizer;
  std::vector<std::vector<double>> ready(bucket_bytes_.size());
  for (const StepMarks& step : complete) {
    const double forward_end = step.points[label_of(StepPoint::kForwardEnd)];
    const double backward_end = step.points[label_of(StepPoint::kBackwardEnd)];
    const double sync_end = std::max(backward_end, step.points[label_of(StepPoint::kSyncEnd)]);
    forward.push_back(forward_end);
    backward.push_back(backward_end - forward_end);
    sync.push_back(sync_end - backward_end);
    optimizer.push_back(step.points[label_of(StepPoint::kEnd)] - sync_end);
    for (size_t b = 0; b < ready.size(); ++b) {
      // A bucket whose gradients did not all arrive is reduced when backward ends (as the
      // synchronizer does, zero-filling the missing ones).
      const double at = step.buckets[b] >= 0 ? step.buckets[b] : backward_end;
      ready[b].push_back(at - forward_end);
    }
  }
  info.forward_ms = median(forward);
  info.backward_ms = median(backward);
  info.gradient_sync_ms = median(sync);
  info.optimizer_ms = median(optimizer);
  for (auto& bucket : ready) info.bucket_ready_ms.push_back(median(bucket));
  info.overhead_ms =
      steps_marked_ > 0 ? std::chrono::duration<double, std::milli>(inside_).count() / steps_marked_
                        : 0;
  return info;
}

}  // namespace gpubench
