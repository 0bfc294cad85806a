// fit's report (reporting/fit_verdicts.h) without a probe: a card's verdict from a peak, and an
// inference fit's markdown and JSON (the key/value cache as its own part, the context and the
// longest context per card).
#include <gtest/gtest.h>

#include "reporting/fit_verdicts.h"

namespace gpubench {
namespace {

FitReport inference_report() {
  FitReport r;
  r.recipe = "llama-3.1-70b, bf16, x1, batch 4, inference, prompt 8000, gen 192, int4 weights";
  r.task = Task::kInfer;
  r.batch = 4;
  r.context = 8192;
  r.kv_cache_bytes_per_token = 327680;
  r.breakdown.weights = 39030000000;
  r.breakdown.other = 327680LL * 4 * 8192;
  r.breakdown.activations = 2000000000;
  r.predicted_peak_bytes = r.breakdown.total();
  r.reserve_bytes = 1 << 30;
  r.method = "a prompt's pass and a decode step of the whole model at batch 2 seq 4";
  r.probe_columns = {"blocks", "vocabulary", "batch", "prompt"};
  r.probes = {{0, 0, 2, 4}, {1, 2048, 4, 8}};
  r.cards = card_verdicts(
      {{"48GB", 48000000000}, {"80GB", 80000000000}}, r.predicted_peak_bytes, r.reserve_bytes,
      [](int64_t capacity) { return capacity > 60000000000 ? 6 : 1; },
      [](int64_t capacity) { return capacity > 60000000000 ? 13933 : 2842; });
  return r;
}

TEST(FitReport, AnInferenceFitJudgesTheBatchAndTheContext) {
  const FitReport r = inference_report();
  ASSERT_EQ(r.cards.size(), 2u);
  EXPECT_FALSE(r.cards[0].fits);
  EXPECT_EQ(r.cards[0].headroom_bytes, 48000000000 - (1 << 30) - r.predicted_peak_bytes);
  EXPECT_TRUE(r.cards[1].fits);
  EXPECT_EQ(r.cards[1].max_context, 13933);
  const std::string markdown = render_fit_markdown(r);
  for (const char* text :
       {"# gpubench fit: llama-3.1-70b",
        "| key/value cache | 10.00 | batch x context x 327680 bytes",
        "| blocks | vocabulary | batch | prompt |\n|---|---|---|---|\n| all | all | 2 | 4 |",
        "| 1 | 2048 | 4 | 8 |", "| card | memory | fits batch 4, context 8192 | headroom",
        "longest context at batch 4 |", "| 48GB | 48 GB | no |", "| 1 | 2842 |",
        "| 80GB | 80 GB | yes |", "| 6 | 13933 |"}) {
    EXPECT_NE(markdown.find(text), std::string::npos) << text << "\n" << markdown;
  }
  EXPECT_EQ(markdown.find("| gradients |"), std::string::npos) << markdown;
  const nlohmann::json json = fit_report_to_json(r);
  EXPECT_EQ(json["task"], "infer");
  EXPECT_EQ(json["context"], 8192);
  EXPECT_EQ(json["kv_cache_bytes_per_token"], 327680);
  EXPECT_EQ(json["cards"][1]["max_context"], 13933);
}

// A training fit's report keeps its shape: no context, no max_context, its five parts.
TEST(FitReport, ATrainingFitHasNoContext) {
  FitReport r = inference_report();
  r.task = Task::kTrain;
  r.cards = card_verdicts({{"80GB", 80000000000}}, r.predicted_peak_bytes, r.reserve_bytes,
                          [](int64_t) { return 3; });
  EXPECT_EQ(r.cards[0].max_context, -1);
  const nlohmann::json json = fit_report_to_json(r);
  EXPECT_EQ(json["task"], "train");
  EXPECT_FALSE(json.contains("context"));
  EXPECT_FALSE(json["cards"][0].contains("max_context"));
  const std::string markdown = render_fit_markdown(r);
  EXPECT_NE(markdown.find("| gradients |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| card | memory | fits batch 4 | headroom | largest batch |\n"),
            std::string::npos)
      << markdown;
}

// fit --format csv is tidy, as report's: a record per figure, its number in full apart from its
// text; every figure of the markdown is there.
TEST(FitReport, CsvHasARecordPerFigure) {
  const FitReport r = inference_report();
  const std::string csv = render_fit(r, "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "table,recipe,part,probe,card,column,value,spread_pct,text");
  for (const std::string& record :
       {",predicted_peak_bytes," + std::to_string(r.predicted_peak_bytes) + ",,",
        std::string("breakdown,,key/value cache,,,bytes,10737418240,,10737418240"),
        std::string("probes,,,2,,vocabulary,2048,,2048"), std::string("cards,,,,48GB,fits,0,,no"),
        std::string("cards,,,,80GB,max_context,13933,,"),
        std::string("cards,,,,80GB,max_batch,6,,6")}) {
    EXPECT_NE(csv.find(record), std::string::npos) << record << "\n" << csv;
  }
  EXPECT_EQ(render_fit(r, "markdown"), render_fit_markdown(r));
  EXPECT_EQ(nlohmann::json::parse(render_fit(r, "json")), fit_report_to_json(r));
}

}  // namespace
}  // namespace gpubench
