#include "memory/batch_search.h"

#include <algorithm>

namespace gpubench {

BatchSearchInfo search_largest_batch(int64_t predicted, const BatchProbeRunner& probe,
                                     int64_t largest, int64_t smallest) {
  BatchSearchInfo search;
  search.searched = true;
  search.predicted_batch = predicted;
  // Whether `batch` trains; false as well for a probe that failed, which ends the search.
  bool failed = false;
  auto trains = [&](int64_t batch) {
    search.probes.push_back(probe(batch));
    failed = search.probes.back().outcome == "failed";
    return search.probes.back().outcome == "ok";
  };
  int64_t fits = smallest - 1;  // the largest batch known to train (smallest - 1: none yet)
  int64_t fails = largest + 1;  // the smallest known not to
  const int64_t start = std::clamp<int64_t>(predicted, smallest, largest);
  if (trains(start)) {
    fits = start;
    for (int64_t step = std::max<int64_t>(1, start / 8); fits < largest && !failed; step *= 2) {
      const int64_t next = std::min(largest, fits + step);
      if (!trains(next)) {
        fails = next;
        break;
      }
      fits = next;
    }
  } else {
    fails = start;
    while (fails > smallest && !failed) {
      const int64_t next = std::max(smallest, fails / 2);
      if (trains(next)) {
        fits = next;
        break;
      }
      fails = next;
    }
  }
  while (!failed && fails - fits > 1 && fits < largest) {
    const int64_t middle = fits + (fails - fits) / 2;
    if (trains(middle)) {
      fits = middle;
    } else {
      fails = middle;
    }
  }
  search.found_batch = failed || fits < smallest ? 0 : fits;
  return search;
}

int64_t probe_memory_limit(int64_t search_limit, bool on_host, std::optional<int64_t> available) {
  return on_host && available ? std::min(search_limit, *available) : search_limit;
}

}  // namespace gpubench
