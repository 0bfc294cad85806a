// `gpubench fit`'s answer for a set of cards: does the recipe fit, with what headroom, and the
// largest batch that would (docs/memory.md). The prediction itself is memory/'s.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/memory_info.h"
#include "settings/setting_values.h"

namespace gpubench {

// The JSON of `fit --format json`: its prediction, breakdown and verdicts (docs/memory.md).
inline constexpr const char* kFitSchema = "gpubench.fit/1";

struct CardMemory {
  std::string name;      // "L40S", or the --memory text ("48GB")
  int64_t memory_bytes;  // the datasheet's GB as 10^9 bytes
};

// Every accelerator of the datasheet database that gives its memory.
std::vector<CardMemory> datasheet_cards();
// "48GB,80GB" -> two cards named by their text; throws UsageError naming a bad size.
std::vector<CardMemory> cards_from_list(const std::string& list);

struct CardVerdict {
  CardMemory card;
  bool fits = false;
  int64_t headroom_bytes = 0;  // memory less the reserve less the predicted peak
  int64_t max_batch = 0;       // 0: not even batch 1
  // fit --task infer: the longest context (prompt and generated tokens) at the report's batch;
  // 0: not even the generation's; -1: not asked (training).
  int64_t max_context = -1;
};

struct FitReport {
  std::string recipe;  // "llama-3-8b bf16 batch 4 seq 2048 LoRA r16 ..."
  Task task = Task::kTrain;
  int64_t batch = 0;
  int64_t context = 0;                   // infer: prompt and generated tokens
  int64_t kv_cache_bytes_per_token = 0;  // infer
  // infer, a model with sliding-window layers: their bytes per token and the positions they keep.
  int64_t kv_cache_window_bytes_per_token = 0;
  int64_t kv_cache_window = 0;
  int64_t predicted_peak_bytes = 0;
  MemoryBreakdown breakdown;
  int64_t reserve_bytes = 0;  // kept free on every card (CUDA context, library workspaces)
  std::string method;
  // What was counted rather than probed, each said ("precision fp16 probed as bf16 ..."): a
  // setting this build or machine cannot run (launcher/prediction_subject.h). Empty: all probed.
  std::vector<std::string> counted;
  double probe_seconds = 0;
  // Each probe's figures, as rows under `probe_columns` (the first two: blocks and vocabulary, 0
  // for the model's own; -1: not run).
  std::vector<std::string> probe_columns;
  std::vector<std::vector<int64_t>> probes;
  std::vector<CardVerdict> cards;
};

// The verdict per card; `max_batch` (and for inference `max_context`) answers for a capacity
// (memory less the reserve).
std::vector<CardVerdict> card_verdicts(
    const std::vector<CardMemory>& cards, int64_t predicted_peak, int64_t reserve,
    const std::function<int64_t(int64_t)>& max_batch,
    const std::function<int64_t(int64_t)>& max_context = nullptr);

// {"task", "predicted_peak_bytes": N, "breakdown": {...}, "cards": [{"name", "memory_bytes",
// "fits", "headroom_bytes", "max_batch"}]}; for inference "context", "kv_cache_bytes_per_token"
// and each card's "max_context" too.
nlohmann::json fit_report_to_json(const FitReport& report);
std::string render_fit_markdown(const FitReport& report);
// table (the markdown laid out within `max_width`: markdown_text.h), markdown, json, or csv: one
// record per figure of each table (prediction, breakdown, probes, cards), as report's CSV.
std::string render_fit(const FitReport& report, const std::string& format, size_t max_width = 0);

}  // namespace gpubench
