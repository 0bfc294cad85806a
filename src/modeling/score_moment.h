// The moments a model's attention holds its scores: the transient that grows with the square of
// the prompt, whose size the model declares (ModelInfo::prefill_score_bytes). fit --task infer's
// probes watch them (infer/inference_fit_probe.cpp): what lives beside the scores, and the pass's
// peak outside them, so that each is scaled by its own rule and the scores are added where they
// are held, not to a peak elsewhere.
#pragma once

#include <functional>

namespace gpubench {

class ScoreMomentWatch {
 public:
  // Calls `begin` as each such moment begins and `end` once its scores are gone, on this thread,
  // until destroyed.
  ScoreMomentWatch(std::function<void()> begin, std::function<void()> end);
  ~ScoreMomentWatch();
  ScoreMomentWatch(const ScoreMomentWatch&) = delete;
  ScoreMomentWatch& operator=(const ScoreMomentWatch&) = delete;

 private:
  friend class ScoreMoment;
  std::function<void()> begin_, end_;
  ScoreMomentWatch* previous_;
};

// Held by a model around the code that makes and drops its attention's scores (declared before
// them, so that it ends after they are freed); nothing happens when nothing watches.
class ScoreMoment {
 public:
  ScoreMoment();
  ~ScoreMoment();
  ScoreMoment(const ScoreMoment&) = delete;
  ScoreMoment& operator=(const ScoreMoment&) = delete;

 private:
  ScoreMomentWatch* watch_;
};

}  // namespace gpubench
