#include "modeling/score_moment.h"

#include <utility>

namespace gpubench {
namespace {

thread_local ScoreMomentWatch* installed = nullptr;

}  // namespace

ScoreMomentWatch::ScoreMomentWatch(std::function<void()> begin, std::function<void()> end)
    : begin_(std::move(begin)), end_(std::move(end)), previous_(installed) {
  installed = this;
}

ScoreMomentWatch::~ScoreMomentWatch() {
  installed = previous_;
}

ScoreMoment::ScoreMoment() : watch_(installed) {
  if (watch_) watch_->begin_();
}

ScoreMoment::~ScoreMoment() {
  if (watch_) watch_->end_();
}

}  // namespace gpubench
