#include "reporting/fit_verdicts.h"

#include "common/byte_size.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "datasheets/datasheet_database.h"
#include "reporting/markdown_text.h"
#include "reporting/report.h"

namespace gpubench {

std::vector<CardMemory> datasheet_cards() {
  std::vector<CardMemory> cards;
  for (const Accelerator& accelerator : datasheets().accelerators) {
    if (const auto gb = accelerator.number("memory_gb")) {
      cards.push_back({accelerator.name, static_cast<int64_t>(*gb * 1e9)});
    }
  }
  return cards;
}

std::vector<CardMemory> cards_from_list(const std::string& list) {
  std::vector<CardMemory> cards;
  for (const std::string& entry : split_list(list, "--memory", "48GB,80GB")) {
    cards.push_back({entry, parse_byte_size(entry, "--memory", kSmallestCardBytes)});
  }
  return cards;
}

std::vector<CardVerdict> card_verdicts(const std::vector<CardMemory>& cards, int64_t predicted_peak,
                                       int64_t reserve,
                                       const std::function<int64_t(int64_t)>& max_batch,
                                       const std::function<int64_t(int64_t)>& max_context) {
  std::vector<CardVerdict> verdicts;
  for (const CardMemory& card : cards) {
    CardVerdict verdict;
    verdict.card = card;
    const int64_t capacity = card.memory_bytes - reserve;
    verdict.headroom_bytes = capacity - predicted_peak;
    verdict.fits = verdict.headroom_bytes >= 0;
    verdict.max_batch = capacity > 0 ? max_batch(capacity) : 0;
    if (max_context) verdict.max_context = capacity > 0 ? max_context(capacity) : 0;
    verdicts.push_back(verdict);
  }
  return verdicts;
}

nlohmann::json fit_report_to_json(const FitReport& report) {
  const bool infer = report.task == Task::kInfer;
  nlohmann::json cards = nlohmann::json::array();
  for (const CardVerdict& v : report.cards) {
    cards.push_back({{"name", v.card.name},
                     {"memory_bytes", v.card.memory_bytes},
                     {"fits", v.fits},
                     {"headroom_bytes", v.headroom_bytes},
                     {"max_batch", v.max_batch}});
    if (infer) cards.back()["max_context"] = v.max_context;
  }
  nlohmann::json json = {{"schema", kFitSchema},
                         {"task", to_string(report.task)},
                         {"predicted_peak_bytes", report.predicted_peak_bytes},
                         {"breakdown", breakdown_to_json(report.breakdown)},
                         {"cards", cards}};
  if (!report.counted.empty()) json["counted_not_probed"] = report.counted;
  if (infer) {
    json["context"] = report.context;
    json["kv_cache_bytes_per_token"] = report.kv_cache_bytes_per_token;
    if (report.kv_cache_window > 0) {
      json["kv_cache_window_bytes_per_token"] = report.kv_cache_window_bytes_per_token;
      json["kv_cache_window"] = report.kv_cache_window;
    }
  }
  return json;
}

namespace {

struct PartRow {
  const char* name;
  int64_t bytes;
  std::string how;
};

std::vector<PartRow> part_rows(const FitReport& r) {
  const MemoryBreakdown& b = r.breakdown;
  if (r.task == Task::kInfer) {
    const std::string windows =
        r.kv_cache_window > 0 ? " + batch x min(context, " + std::to_string(r.kv_cache_window) +
                                    ") x " + std::to_string(r.kv_cache_window_bytes_per_token) +
                                    " in the sliding-window layers"
                              : "";
    return {{"weights", b.weights, "counted from the tensors, in their format (codes and scales)"},
            {"key/value cache", b.other,
             "batch x context x " + std::to_string(r.kv_cache_bytes_per_token) +
                 " bytes per token" + windows + ", as allocated"},
            {"activations", b.activations,
             "measured: the larger of the prompt's pass and the last decode step, scaled to the "
             "batch and lengths"}};
  }
  return {{"weights", b.weights, "counted from the tensors"},
          {"gradients", b.gradients, "counted from the tensors"},
          {"optimizer states", b.optimizer_states, "counted from the optimiser's parameters"},
          {"activations", b.activations, "measured, scaled to the batch and length"},
          {"other", b.other, "measured: the step's peak less the above"}};
}

std::string probes_table(const FitReport& r) {
  std::string out = "| " + join(r.probe_columns, " | ") + " |\n|";
  for (size_t i = 0; i < r.probe_columns.size(); ++i) out += "---|";
  out += "\n";
  for (const std::vector<int64_t>& probe : r.probes) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < probe.size(); ++i) {
      if (i < 2 && probe[i] == 0) {  // blocks and vocabulary: the model's own
        cells.push_back("all");
      } else {
        cells.push_back(probe[i] < 0 ? "not run" : std::to_string(probe[i]));
      }
    }
    out += "| " + join(cells, " | ") + " |\n";
  }
  return out;
}

std::string cards_table(const FitReport& r) {
  const bool infer = r.task == Task::kInfer;
  const std::string shape =
      "batch " + std::to_string(r.batch) + (infer ? ", context " + std::to_string(r.context) : "");
  std::string out = "| card | memory | fits " + shape + " | headroom | largest batch |" +
                    (infer ? " longest context at batch " + std::to_string(r.batch) + " |" : "") +
                    "\n|---|---|---|---|---|" + (infer ? "---|" : "") + "\n";
  for (const CardVerdict& v : r.cards) {
    out += "| " + markdown_cell(v.card.name) + " | " + format_fixed(v.card.memory_bytes / 1e9, 0) +
           " GB | " + (v.fits ? "yes" : "no") + " | " + bytes_text(v.headroom_bytes) + " | " +
           std::to_string(v.max_batch) + " |" +
           (infer ? " " + std::to_string(v.max_context) + " |" : "") + "\n";
  }
  return out;
}

}  // namespace

std::string render_fit_markdown(const FitReport& r) {
  std::string out = "# gpubench fit: " + r.recipe + "\n\n";
  out += "Predicted peak per device: " + bytes_text(r.predicted_peak_bytes) + " (" +
         std::to_string(r.predicted_peak_bytes) + " bytes)\n\n";
  out += "| part | GiB | how |\n|---|---|---|\n";
  for (const PartRow& part : part_rows(r)) {
    out += std::string("| ") + part.name + " | " + format_fixed(part.bytes / double(1ll << 30), 2) +
           " | " + part.how + " |\n";
  }
  out += "\nMeasured by " + r.method + " in " + format_fixed(r.probe_seconds, 1) + " s:\n\n";
  if (!r.counted.empty()) {
    out +=
        "Counted, not probed (what this build or machine cannot run, or the CPU runs too "
        "slowly):\n\n";
    for (const std::string& line : r.counted) out += "- " + line + "\n";
    out += "\n";
  }
  out += probes_table(r) + "\n" + cards_table(r);
  out += "\nEach card keeps " + bytes_text(r.reserve_bytes) +
         " free (--reserve) for what the allocator's count leaves out: the CUDA context, "
         "cuBLAS and cuDNN workspaces, fragmentation. Datasheet GB are 10^9 bytes.\n";
  return out;
}

// The tables of the markdown as a Report (report.h), so CSV is tidy as report's is: one record
// per figure, its number in full and its text apart.
Report fit_report_tables(const FitReport& r) {
  const auto number = [](int64_t value) {
    return ReportCell{static_cast<double>(value), std::to_string(value)};
  };
  Report report;
  report.title = "gpubench fit: " + r.recipe;
  ReportTable peak{"prediction", "Predicted peak per device",
                   {"recipe"},   {"predicted_peak_bytes", "reserve_bytes", "probe_seconds"},
                   {},           r.counted};
  peak.rows.push_back({{r.recipe},
                       {number(r.predicted_peak_bytes),
                        number(r.reserve_bytes),
                        {r.probe_seconds, format_fixed(r.probe_seconds, 1)}}});
  ReportTable parts{"breakdown", "Peak per device by part", {"part"}, {"bytes", "how"}, {}, {}};
  for (const PartRow& part : part_rows(r)) {
    parts.rows.push_back({{part.name}, {number(part.bytes), {std::nullopt, part.how}}});
  }
  ReportTable probes{"probes", "Measured by " + r.method, {"probe"}, r.probe_columns, {}, {}};
  for (size_t i = 0; i < r.probes.size(); ++i) {
    ReportRow row{{std::to_string(i + 1)}, {}};
    for (int64_t value : r.probes[i]) {
      row.cells.push_back(value < 0 ? ReportCell{std::nullopt, "not run"} : number(value));
    }
    probes.rows.push_back(std::move(row));
  }
  const bool infer = r.task == Task::kInfer;
  ReportTable cards{
      "cards", "Cards", {"card"}, {"memory_bytes", "fits", "headroom_bytes", "max_batch"}, {}, {}};
  if (infer) cards.columns.push_back("max_context");
  for (const CardVerdict& v : r.cards) {
    ReportRow row{{v.card.name},
                  {number(v.card.memory_bytes),
                   {v.fits ? 1.0 : 0.0, v.fits ? "yes" : "no"},
                   number(v.headroom_bytes),
                   number(v.max_batch)}};
    if (infer) row.cells.push_back(number(v.max_context));
    cards.rows.push_back(std::move(row));
  }
  report.tables = {std::move(peak), std::move(parts), std::move(probes), std::move(cards)};
  return report;
}

std::string render_fit(const FitReport& report, const std::string& format, size_t max_width) {
  if (format == "table") return markdown_as_text(render_fit_markdown(report), max_width);
  if (format == "json") return json_text(fit_report_to_json(report)) + "\n";
  if (format == "csv") return render_csv(fit_report_tables(report));
  return render_fit_markdown(report);
}

}  // namespace gpubench
