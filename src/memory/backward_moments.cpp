#include "memory/backward_moments.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <ATen/record_function.h>

#include "memory/tensor_memory.h"

namespace gpubench {
namespace {

std::mutex active_mutex;
BackwardMoments* active = nullptr;

}  // namespace

struct BackwardMomentsCallback {
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& /*function*/) {
    return nullptr;
  }
  static void on_end(const at::RecordFunction& function, at::ObserverContext* /*context*/) {
    const std::lock_guard<std::mutex> lock(active_mutex);
    if (active != nullptr) active->record(function.name());
  }
};

BackwardMoments::BackwardMoments(torch::Device device) : device_(device) {
  {
    const std::lock_guard<std::mutex> lock(active_mutex);
    if (active != nullptr) throw std::logic_error("BackwardMoments: one is recording already");
    active = this;
  }
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&BackwardMomentsCallback::on_start,
                                                             &BackwardMomentsCallback::on_end)
                                      .scopes({at::RecordScope::BACKWARD_FUNCTION}));
}

BackwardMoments::~BackwardMoments() {
  at::removeCallback(handle_);
  const std::lock_guard<std::mutex> lock(active_mutex);
  active = nullptr;
}

void BackwardMoments::record(const char* node) {
  const int64_t peak = tensor_memory::peak_allocated_bytes(device_);
  moments_.push_back({std::hash<std::string_view>{}(node), peak});
  highest_ = std::max(highest_, peak);
  tensor_memory::reset_peak(device_);
}

std::vector<BackwardMoments::Moment> BackwardMoments::take() {
  const std::lock_guard<std::mutex> lock(active_mutex);
  return std::move(moments_);
}

int64_t BackwardMoments::highest() const {
  const std::lock_guard<std::mutex> lock(active_mutex);
  return highest_;
}

std::optional<std::pair<size_t, size_t>> steepest_moment(
    const std::vector<BackwardMoments::Moment>& smaller,
    const std::vector<BackwardMoments::Moment>& larger) {
  const size_t n = smaller.size(), m = larger.size();
  size_t prefix = 0, suffix = 0;
  while (prefix < std::min(n, m) && smaller[prefix].node == larger[prefix].node) ++prefix;
  while (prefix + suffix < std::min(n, m) &&
         smaller[n - 1 - suffix].node == larger[m - 1 - suffix].node) {
    ++suffix;
  }
  std::optional<std::pair<size_t, size_t>> steepest;
  const auto growth = [&](const std::pair<size_t, size_t>& pair) {
    return larger[pair.second].peak - smaller[pair.first].peak;
  };
  const auto consider = [&](size_t i, size_t j) {
    if (smaller[i].peak < 0 || larger[j].peak < 0) return;
    const std::pair<size_t, size_t> pair{i, j};
    if (!steepest || growth(pair) > growth(*steepest) ||
        (growth(pair) == growth(*steepest) && larger[j].peak > larger[steepest->second].peak)) {
      steepest = pair;
    }
  };
  for (size_t i = 0; i < prefix; ++i) consider(i, i);
  for (size_t k = 0; k < suffix; ++k) consider(n - 1 - k, m - 1 - k);
  return steepest;
}

}  // namespace gpubench
