#include "common/closest_name.h"

#include <algorithm>
#include <cctype>

namespace gpubench {
namespace {

std::string folded(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
size_t edits(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closest_name(const std::string& given,
                                        const std::vector<std::string>& known) {
  constexpr size_t kMostEdits = 3, kShortestPrefix = 3;
  const std::string target = folded(given);
  std::vector<std::string> extending;  // names that begin with it ("--batch": "--batch-size")
  for (const std::string& name : known) {
    const std::string candidate = folded(name);
    if (candidate == target) return name;
    if (target.size() >= kShortestPrefix && candidate.rfind(target, 0) == 0) {
      extending.push_back(name);
    }
  }
  if (extending.size() == 1) return extending.front();
  std::optional<std::string> best;
  size_t best_edits = 0;
  bool tied = false;
  for (const std::string& name : known) {
    const std::string candidate = folded(name);
    const size_t distance = edits(target, candidate);
    const size_t allowed = std::min(kMostEdits, std::max(target.size(), candidate.size()) / 3);
    if (distance > allowed) continue;
    if (!best || distance < best_edits) {
      best = name;
      best_edits = distance;
      tied = false;
    } else if (distance == best_edits && name != *best) {
      tied = true;
    }
  }
  if (tied) return std::nullopt;
  return best;
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& known) {
  const std::optional<std::string> name = closest_name(given, known);
  return name ? " did you mean '" + *name + "'?" : "";
}

}  // namespace gpubench
