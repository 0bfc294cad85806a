// report, compare and regress on hand-written fixture results (tests/fixtures/reports/).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "reporting/fp8_speedup.h"
#include "reporting/markdown_text.h"
#include "reporting/regression.h"
#include "reporting/report.h"
#include "reporting/results_table.h"
#include "results/statistics.h"
#include "settings/benchmark_fields.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

const std::string kFixtures = std::string(GPUBENCH_SOURCE_DIR) + "/tests/fixtures/reports";

std::vector<LoadedResult> fixtures() {
  return load_results({kFixtures});
}

// Every number below was worked out by hand from the fixtures: 4543.2 / 1262 = 3.60,
// 2524 / 1262 = 2.00, 1350 / 450 = 3.00, sqrt(2 x 3) = 2.45, 4543.2 / (4 x 1262) = 90.0 %,
// CV of (1250, 1262, 1274) = 12 / 1262 = 1.0 %. Only the A40 x4 fixture has a `distributed`
// block (12.5 ms exposed, share 0.055); the others predate it and get no communication cell.
// A40 x1 resnet50 has a measured memory block (peak 10 GiB, 11 GiB reserved on a 44.4 GiB
// card: 33.4 GiB free), L40S x4 resnet50 the block of its out-of-memory.
const char* kExpectedMarkdown = R"md(# gpubench report (8 result files)

## Throughput (global, median trial ± CV of trials)

| model | precision | setup | unit | NVIDIA A40 x1 | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x1 | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- | --- | --- | --- |
| resnet50 | fp16 | batch 64 | images/sec | 1262.0 ±1.0% | 4543.2 ±0.0% | 2524.0 ±0.0% | oom: CUDA out of memory. Tried to allocate 2.00 GiB |
| vgg16 | fp16 | batch 64 | images/sec | 450.0 | not run | 1350.0 | not run |
| transformerxl-base | fp16 | batch 64 | tokens/sec | 10000.0 | not run | 40000.0 | not run |

## Throughput normalised to gpu="NVIDIA A40",gpus=1

| model | precision | setup | NVIDIA A40 x1 | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x1 | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- | --- | --- |
| resnet50 | fp16 | batch 64 | 1.00 | 3.60 | 2.00 | - |
| vgg16 | fp16 | batch 64 | 1.00 | - | 3.00 | - |
| transformerxl-base | fp16 | batch 64 | 1.00 | - | 4.00 | - |

## Geometric mean of normalised throughput per family

| family | NVIDIA A40 x1 | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x1 | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- |
| convnet | 1.00 (n=2) | 3.60 (n=1) | 2.45 (n=2) | - |
| language-model | 1.00 (n=1) | - | 4.00 (n=1) | - |

## Scaling efficiency: throughput(N) / (N x throughput(1))

| model | precision | setup | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- |
| resnet50 | fp16 | batch 64 | 90.0% | - |
| vgg16 | fp16 | batch 64 | - | - |
| transformerxl-base | fp16 | batch 64 | - | - |

## Exposed communication per step: ms the backward pass did not hide (share of the step)

| model | precision | setup | NVIDIA A40 x1 | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x1 | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- | --- | --- |
| resnet50 | fp16 | batch 64 | - | 12.5 ms (5.5%) | - | - |
| vgg16 | fp16 | batch 64 | - | - | - | - |
| transformerxl-base | fp16 | batch 64 | - | - | - | - |

## Achieved TFLOP/s (training: 3 x forward FLOPs per sample; serving: 1 x; generation: none)

| model | precision | setup | NVIDIA A40 x1 | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x1 | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- | --- | --- |
| resnet50 | fp16 | batch 64 | 30.90 | 123.80 | 61.90 | - |
| vgg16 | fp16 | batch 64 | 41.80 | - | 83.50 | - |
| transformerxl-base | fp16 | batch 64 | - | - | - | - |

## Peak memory per device: weights / gradients / optimiser states / activations / other

| model | precision | setup | NVIDIA A40 x1 | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x1 | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- | --- | --- |
| resnet50 | fp16 | batch 64 | 10.0 GiB (100.0 MiB / 100.0 MiB / 100.0 MiB / 9.0 GiB / 724.0 MiB) | - | - | 44.0 GiB (100.0 MiB / 100.0 MiB / 100.0 MiB / 43.7 GiB / 0.0 KiB) at failure |
| vgg16 | fp16 | batch 64 | - | - | - | - |
| transformerxl-base | fp16 | batch 64 | - | - | - | - |

## Fits the card: headroom at the measured peak, or does not fit

| model | precision | setup | NVIDIA A40 x1 | NVIDIA A40 x4 (bucket 25 MiB) | NVIDIA L40S x1 | NVIDIA L40S x4 (bucket 25 MiB) |
| --- | --- | --- | --- | --- | --- | --- |
| resnet50 | fp16 | batch 64 | fits (33.4 GiB free) | - | - | does not fit |
| vgg16 | fp16 | batch 64 | - | - | - | - |
| transformerxl-base | fp16 | batch 64 | - | - | - | - |
)md";

TEST(Report, MarkdownTablesFromFixturesAreExact) {
  ReportOptions options;
  options.normalize_to = "gpu=\"NVIDIA A40\",gpus=1";
  EXPECT_EQ(render_markdown(build_report(fixtures(), options)), kExpectedMarkdown);
}

// The CSV is tidy: one header, one record per cell, its value, its trials' spread and its text in
// columns of their own.
TEST(Report, CsvAndJsonCarryTheSameCells) {
  const Report report = build_report(fixtures(), {});
  const std::string csv = render_csv(report);
  std::istringstream lines(csv);
  std::string header, first, second, third, fourth;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, third);
  std::getline(lines, fourth);
  EXPECT_EQ(header.rfind("table,model,precision,setup,unit,", 0), 0u) << header;
  const std::string tail = ",column,value,spread_pct,text";
  EXPECT_EQ(header.substr(header.size() - tail.size()), tail) << header;
  const std::string row = "throughput,resnet50,fp16,batch 64,images/sec,";
  const size_t blanks = static_cast<size_t>(std::count(header.begin(), header.end(), ',') -
                                            8);  // label columns of other tables
  const std::string empty(blanks, ',');
  // The spread in full (0.95 %), where the text rounds it.
  EXPECT_EQ(first, row + empty + "NVIDIA A40 x1,1262,0.9508716323296356,1262.0 ±1.0%") << csv;
  EXPECT_EQ(second, row + empty + "NVIDIA A40 x4 (bucket 25 MiB),4543.2,0,4543.2 ±0.0%") << csv;
  EXPECT_EQ(third, row + empty + "NVIDIA L40S x1,2524,0,2524.0 ±0.0%") << csv;
  EXPECT_EQ(fourth, row + empty +
                        "NVIDIA L40S x4 (bucket 25 MiB),,,oom: CUDA out of memory. Tried to "
                        "allocate 2.00 GiB")
      << csv;
  const auto json = nlohmann::json::parse(render_json(report));
  const auto& table = json["tables"][0];
  EXPECT_EQ(table["id"], "throughput");
  EXPECT_EQ(table["rows"][0]["labels"],
            nlohmann::json({"resnet50", "fp16", "batch 64", "images/sec"}));
  EXPECT_DOUBLE_EQ(table["rows"][0]["cells"][1]["value"].get<double>(), 4543.2);
  EXPECT_TRUE(table["rows"][0]["cells"][3]["value"].is_null());
  EXPECT_EQ(table["rows"][1]["cells"][1]["text"], "not run");
}

// Rows sort by batch as a number: 448 before 1280 (as text, "batch 1280" came first).
TEST(Report, BatchesSortByTheirNumber) {
  std::vector<LoadedResult> results;
  for (const int64_t batch : {1280, 448, 928}) {
    LoadedResult l = fixtures().front();
    l.result.benchmark.batch_size = batch;
    results.push_back(l);
  }
  const std::string md = render_markdown(build_report(results, {}));
  const size_t b448 = md.find("| batch 448 |"), b928 = md.find("| batch 928 |"),
               b1280 = md.find("| batch 1280 |");
  ASSERT_NE(b448, std::string::npos) << md;
  EXPECT_LT(b448, b928) << md;
  EXPECT_LT(b928, b1280) << md;
}

TEST(Report, HtmlIsSelfContainedWithBarAndLineCharts) {
  const std::string html = render_html(build_report(fixtures(), {}));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("class=\"bar\""), std::string::npos);
  EXPECT_NE(html.find("class=\"line\""), std::string::npos);  // scaling efficiency
  EXPECT_NE(html.find("<table>"), std::string::npos);
  for (const char* external : {"http:", "https:", "<script", "@import", "url(", "<link"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
}

// A published figure stands beside a measurement of the same GPU, in a column named after its
// publisher, and two publishers' figures for one GPU stay apart.
TEST(Report, PublishedFiguresGetAColumnPerPublisher) {
  std::vector<LoadedResult> results;
  for (auto& loaded : fixtures()) {
    if (system_name(loaded.result) == "NVIDIA A40" && loaded.result.benchmark.gpus == 1 &&
        loaded.result.benchmark.model == "resnet50") {
      results.push_back(loaded);
    }
  }
  ASSERT_EQ(results.size(), 1u);
  for (const auto& [source, throughput] : std::vector<std::pair<std::string, double>>{
           {"BIZON tables", 1262.0}, {"Lambda CSV", 653.0}}) {
    LoadedResult published = results.front();
    published.result.status = RunStatus::kPublished;
    published.result.source = source;
    published.result.metrics.throughput = throughput;
    published.result.metrics.trials = {throughput};
    results.push_back(published);
  }
  const std::string md = render_markdown(build_report(results, {}));
  EXPECT_NE(md.find("| model | precision | setup | unit | NVIDIA A40 x1 | NVIDIA A40 (BIZON) x1 | "
                    "NVIDIA A40 (Lambda) x1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| resnet50 | fp16 | batch 64 | images/sec | 1262.0 ±1.0% | 1262.0 "
                    "(published) | 653.0 (published) |"),
            std::string::npos)
      << md;
}

TEST(Report, BadSelectorsAndFormatsAreUsageErrors) {
  ReportOptions options;
  options.normalize_to = "colour=red";
  EXPECT_THROW(build_report(fixtures(), options), UsageError);
  options.normalize_to = "gpu=\"NVIDIA H100\"";
  EXPECT_THROW(build_report(fixtures(), options), UsageError);  // matches nothing
  EXPECT_THROW(render_report(Report{}, "pdf"), UsageError);
  EXPECT_THROW(ResultSelector::parse("gpu=\"unterminated"), UsageError);
}

// A selector's value is checked as the command line's is, naming the bad value: not a silent
// "matches no result". A key given twice is refused, not the last one kept.
TEST(Report, SelectorValuesAreCheckedAndCanonical) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      ResultSelector::parse(text);
    } catch (const UsageError& error) {
      return error.what();
    }
    return "";
  };
  EXPECT_NE(error_of("gpus=-1").find("gpus must be"), std::string::npos) << error_of("gpus=-1");
  EXPECT_NE(error_of("gpus=nan").find("gpus"), std::string::npos);
  EXPECT_NE(error_of("gpus=99999999999999999999").find("gpus"), std::string::npos);
  EXPECT_NE(error_of("batch_size=abc").find("batch_size"), std::string::npos);
  EXPECT_NE(error_of("precision=fp64").find("precision"), std::string::npos);
  EXPECT_NE(error_of("gpus=1,gpus=4").find("gives gpus twice"), std::string::npos);
  const std::vector<LoadedResult> all = fixtures();
  const ResultSelector padded = ResultSelector::parse("gpus=04,model=resnet50");
  EXPECT_TRUE(std::any_of(all.begin(), all.end(),
                          [&](const LoadedResult& l) { return padded.matches(l.result); }));
}

TEST(Compare, RatiosPerRowAndGeometricMeanPerFamily) {
  std::vector<LoadedResult> a, b;
  for (auto& l : fixtures()) (system_name(l.result) == "NVIDIA A40" ? a : b).push_back(l);
  const Report report = build_comparison(a, b, "A40", "L40S");
  const std::string md = render_markdown(report);
  EXPECT_NE(md.find("# gpubench compare: A40 vs L40S\n\n## A40 vs L40S\n"), std::string::npos)
      << "the section as the title: A, then B\n"
      << md;
  EXPECT_NE(md.find("| resnet50 | fp16 | 1 | batch 64 | 1262.0 ±1.0% | 2524.0 ±0.0% | 2.000 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| resnet50 | fp16 | 4 | batch 64 bucket 25 MiB | 4543.2 ±0.0% | oom: CUDA "
                    "out of memory. Tried to allocate 2.00 GiB | - |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| convnet | 2.449 | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| language-model | 4.000 | 1 |"), std::string::npos) << md;
  // A row on one side only is listed, not dropped.
  const Report one_sided = build_comparison(a, {b.front()}, "A40", "L40S");
  EXPECT_NE(render_markdown(one_sided).find("only in A"), std::string::npos);
  // No row on both sides: no ratio, and no table of their geometric means.
  const std::string disjoint = render_markdown(build_comparison(a, {}, "A40", "L40S"));
  EXPECT_NE(disjoint.find("only in A"), std::string::npos) << disjoint;
  EXPECT_EQ(disjoint.find("Geometric-mean"), std::string::npos) << disjoint;
  EXPECT_NE(md.find("Geometric-mean B/A per family"), std::string::npos) << md;
}

// Generation rows: each side's share of its decode ceiling beside the latency figures.
TEST(Compare, GenerationRowsCarryEachSidesShareOfItsCeiling) {
  auto decode = [](const std::string& gpu, double fraction) {
    LoadedResult l;
    Result& r = l.result;
    r.status = RunStatus::kOk;
    r.benchmark.model = "llama-3.1-70b";
    r.benchmark.precision = Precision::kBf16;
    r.benchmark.device = DeviceKind::kCuda;
    r.benchmark.task = Task::kInfer;
    r.benchmark.batch_size = 1;
    r.benchmark.weights = "int4";
    r.benchmark.weight_group = 128;
    r.model_family = "language-model";
    r.system.gpu_name = gpu;
    r.metrics.trials = {10};
    r.metrics.throughput = 10;
    r.metrics.throughput_unit = "tokens/sec";
    InferenceMetrics& m = r.metrics.inference;
    m.present = true;
    m.request_latency_ms.count = 1;
    m.decode_ceiling_tokens_per_second = fraction > 0 ? 10 / fraction : 0;
    m.decode_ceiling_fraction = fraction;
    return l;
  };
  const std::string md = render_markdown(
      build_comparison({decode("NVIDIA A40", 0.5)}, {decode("NVIDIA L40S", 0)}, "A40", "L40S"));
  EXPECT_NE(md.find("A40 % of ceiling | L40S % of ceiling |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 50.0% | - |"), std::string::npos) << md;
}

TEST(Statistics, GeometricMeanAndStudentT) {
  EXPECT_DOUBLE_EQ(geometric_mean({2, 8}), 4);
  EXPECT_NEAR(student_t_cdf(1.0, 1.0), 0.75, 1e-12);               // Cauchy
  EXPECT_NEAR(student_t_cdf(2.0, 5.0), 0.9490302605850709, 1e-9);  // scipy.stats.t.cdf(2, 5)
  // Non-integral degrees of freedom, against direct numerical integration of the t density.
  EXPECT_NEAR(student_t_cdf(-2.5, 3.7), 0.0359110114559138, 1e-9);
}

LoadedResult measured(const std::string& model, std::vector<double> trials) {
  LoadedResult l;
  Result& r = l.result;
  r.benchmark.model = model;
  r.benchmark.precision = Precision::kFp16;
  r.benchmark.device = DeviceKind::kCuda;
  r.benchmark.gpus = 1;
  r.benchmark.tensor_parallel = 1;
  r.benchmark.expert_parallel = 1;
  r.benchmark.batch_size = 256;
  r.benchmark.bucket_mb = 25;
  r.model_family = "convnet";
  r.system.gpu_name = "NVIDIA A40";
  r.metrics.trials = trials;
  r.metrics.throughput = median(trials);
  r.metrics.throughput_unit = "images/sec";
  return l;
}

const RegressionRow& row_for(const RegressionReport& report, const std::string& model) {
  for (const auto& row : report.rows) {
    if (row.benchmark.rfind(model + " ", 0) == 0) return row;
  }
  throw std::runtime_error("no row for " + model);
}

// Lambda's convnet score (../shared/seeds/lambda-a6000-vs-3090.txt): SSD, ResNet-50 and Mask
// R-CNN on two cards, each normalised to the first, their geometric mean in one row. Worked by
// hand: 1.5 x 2 x 1.2 = 3.6, its cube root 1.5326.
TEST(Report, LambdasConvnetScoreIsTheFamilyRowOverItsThreeModels) {
  std::vector<LoadedResult> results;
  for (const auto& [model, base, other] : {std::tuple{"ssd300", 400.0, 600.0},
                                           {"resnet50", 1000.0, 2000.0},
                                           {"maskrcnn", 20.0, 24.0}}) {
    results.push_back(measured(model, {base}));
    LoadedResult faster = measured(model, {other});
    faster.result.system.gpu_name = "NVIDIA L40S";
    results.push_back(faster);
  }
  ReportOptions options;
  options.normalize_to = "gpu=\"NVIDIA A40\"";
  const Report report = build_report(results, options);
  const ReportTable* family = nullptr;
  for (const ReportTable& table : report.tables) {
    if (table.id == "family") family = &table;
  }
  ASSERT_NE(family, nullptr);
  ASSERT_EQ(family->rows.size(), 1u);
  EXPECT_EQ(family->rows[0].labels, std::vector<std::string>{"convnet"});
  ASSERT_EQ(family->columns, (std::vector<std::string>{"NVIDIA A40 x1", "NVIDIA L40S x1"}));
  EXPECT_DOUBLE_EQ(*family->rows[0].cells[0].value, 1.0);
  EXPECT_NEAR(*family->rows[0].cells[1].value, std::cbrt(3.6), 1e-12);
  EXPECT_EQ(family->rows[0].cells[1].text, "1.53 (n=3)");
}

// A run with other work settings is another benchmark, not a slower run of the same one.
TEST(Regress, ADifferentBucketSizeOrMemoryFormatIsAnotherBenchmark) {
  LoadedResult base = measured("resnet50", {1000, 1002, 998});
  base.result.benchmark.gpus = 2;
  base.result.benchmark.channels_last = false;
  LoadedResult bigger_buckets = measured("resnet50", {900, 902, 898});
  bigger_buckets.result.benchmark.gpus = 2;
  bigger_buckets.result.benchmark.bucket_mb = 100;
  LoadedResult channels_last = measured("resnet50", {900, 902, 898});
  channels_last.result.benchmark.gpus = 2;
  channels_last.result.benchmark.channels_last = true;
  // No regression: the base benchmark is missing (which fails the gate by itself), the two
  // others are new.
  RegressOptions missing_allowed;
  missing_allowed.allow_missing = true;
  const RegressionReport report =
      check_regressions({base}, {bigger_buckets, channels_last}, missing_allowed);
  EXPECT_FALSE(report.failed());
  ASSERT_EQ(report.rows.size(), 3u);
  std::map<std::string, Verdict> verdicts;
  for (const auto& row : report.rows) verdicts[row.benchmark] = row.verdict;
  EXPECT_EQ(verdicts["resnet50 fp16 x2 batch 256 bucket 25 MiB on NVIDIA A40"], Verdict::kMissing);
  EXPECT_EQ(verdicts["resnet50 fp16 x2 batch 256 bucket 100 MiB on NVIDIA A40"], Verdict::kNew);
  EXPECT_EQ(verdicts["resnet50 fp16 x2 batch 256 channels-last bucket 25 MiB on NVIDIA A40"],
            Verdict::kNew);
}

// report and compare match on the same identity: the 100 MiB-bucket run gets its own column and
// the channels-last run its own row, in both.
TEST(Report, ABucketSizeOrMemoryFormatIsNeverMergedIntoAnotherBenchmarksCell) {
  LoadedResult base = measured("resnet50", {1000, 1002, 998});
  base.result.benchmark.gpus = 2;
  LoadedResult bigger_buckets = measured("resnet50", {900, 902, 898});
  bigger_buckets.result.benchmark.gpus = 2;
  bigger_buckets.result.benchmark.bucket_mb = 100;
  bigger_buckets.result.started_at = "2026-12-01T00:00:00Z";  // newer: it used to hide base
  LoadedResult channels_last = measured("resnet50", {800, 802, 798});
  channels_last.result.benchmark.gpus = 2;
  channels_last.result.benchmark.channels_last = true;
  const std::string md = render_markdown(build_report({base, bigger_buckets, channels_last}, {}));
  EXPECT_NE(md.find("| model | precision | setup | unit | NVIDIA A40 x2 (bucket 100 MiB) | "
                    "NVIDIA A40 x2 (bucket 25 MiB) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| resnet50 | fp16 | batch 256 | images/sec | 900.0 ±0.2% | 1000.0 ±0.2% |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| resnet50 | fp16 | batch 256 channels-last | images/sec | not run | "
                    "800.0 ±0.2% |"),
            std::string::npos)
      << md;
  LoadedResult graph = measured("resnet50", {1100, 1102, 1098});  // BIZON's XLA rows
  graph.result.benchmark.mode = Mode::kGraph;
  EXPECT_NE(render_markdown(build_report({measured("resnet50", {1000, 1002, 998}), graph}, {}))
                .find("| resnet50 | fp16 | batch 256 graph | images/sec | 1100.0 ±0.2% |"),
            std::string::npos);
  const std::string compared =
      render_markdown(build_comparison({base}, {bigger_buckets, channels_last}, "A", "B"));
  EXPECT_NE(compared.find("| resnet50 | fp16 | 2 | batch 256 bucket 25 MiB | 1000.0 ±0.2% | "
                          "only in A | - |"),
            std::string::npos)
      << compared;
  EXPECT_NE(compared.find("| resnet50 | fp16 | 2 | batch 256 bucket 100 MiB | only in B |"),
            std::string::npos)
      << compared;
}

// Each SKU at its own best batch, as Lambda publishes: only with --across batch_size do the two
// meet in one row, and each cell then names its batch.
TEST(Report, AcrossASettingJoinsRowsThatDifferInItAndSaysSo) {
  LoadedResult a = measured("resnet50", {500, 500, 500});
  a.result.benchmark.batch_size = 224;
  LoadedResult b = measured("resnet50", {1000, 1000, 1000});
  b.result.benchmark.batch_size = 496;
  b.result.system.gpu_name = "NVIDIA RTX A6000";
  const std::string strict = render_markdown(build_comparison({a}, {b}, "A", "B"));
  EXPECT_NE(strict.find("| resnet50 | fp16 | 1 | batch 224 | 500.0 ±0.0% | only in A | - |"),
            std::string::npos)
      << strict;
  const std::string across = render_markdown(build_comparison({a}, {b}, "A", "B", {"batch-size"}));
  EXPECT_NE(across.find("| resnet50 | fp16 | 1 |  | 500.0 ±0.0% [batch 224] | 1000.0 ±0.0% "
                        "[batch 496] | 2.000 |"),
            std::string::npos)
      << across;
  EXPECT_THROW(build_comparison({a}, {b}, "A", "B", {"seed"}), UsageError);  // not the work
  ReportOptions options;
  options.across = {"batch_size"};
  const std::string report = render_markdown(build_report({a, b}, options));
  EXPECT_NE(report.find("| resnet50 | fp16 |  | images/sec | 500.0 ±0.0% [batch 224] | 1000.0 "
                        "±0.0% [batch 496] |"),
            std::string::npos)
      << report;
}

// LoRA's rank has no text of its own (it is part of "LoRA r8 alpha 16 q,k,v,o"), yet --across
// lora_rank joins the rows; a setting shown by no text at all (the device) is named key=value.
TEST(Report, AcrossWorksForEveryIdentitySettingIncludingThoseWithoutText) {
  LoadedResult a = measured("llama-3.2-1b", {500, 500, 500});
  a.result.benchmark.tuning = Tuning::kLora;
  a.result.benchmark.lora_rank = 8;
  a.result.benchmark.lora_alpha = 16;
  a.result.benchmark.lora_targets = "q,k,v,o";
  LoadedResult b = a;
  b.result.benchmark.lora_rank = 16;
  b.result.metrics.trials = {800, 800, 800};
  b.result.metrics.throughput = 800;
  b.result.system.gpu_name = "NVIDIA L40S";
  const std::string strict = render_markdown(build_comparison({a}, {b}, "A", "B"));
  EXPECT_NE(strict.find("LoRA r8 alpha 16 q,k,v,o | 500.0 ±0.0% | only in A"), std::string::npos)
      << strict;
  const std::string across =
      render_markdown(build_comparison({a}, {b}, "A", "B", {"lora_rank", "device"}));
  EXPECT_NE(across.find("| batch 256 LoRA alpha 16 q,k,v,o | 500.0 ±0.0% [r8 device=cuda] | "
                        "800.0 ±0.0% [r16 device=cuda] | 1.600 |"),
            std::string::npos)
      << across;
}

// Two results are one benchmark where their identity values are equal, whatever their text: two
// runs whose device setting differs (it has no text; the system names both) stay apart; a GPU
// run's thread count, which applies on the CPU only, does not split it.
TEST(Regress, IdentityMatchesCanonicalValuesNotText) {
  const LoadedResult cuda = measured("resnet50", {1000, 1000, 1000});
  LoadedResult automatic = cuda;
  automatic.result.benchmark.device = DeviceKind::kAuto;
  EXPECT_EQ(identity_of(cuda.result).text(), identity_of(automatic.result).text());
  const RegressionReport apart = check_regressions({cuda}, {automatic}, {});
  ASSERT_EQ(apart.rows.size(), 2u);
  EXPECT_EQ(apart.rows[0].verdict, Verdict::kMissing);
  LoadedResult more_threads = measured("resnet50", {1000, 1000, 1000});
  more_threads.result.benchmark.threads = 64;
  const RegressionReport same =
      check_regressions({measured("resnet50", {1000, 1000, 1000})}, {more_threads}, {});
  ASSERT_EQ(same.rows.size(), 1u);
  EXPECT_EQ(same.rows[0].verdict, Verdict::kUnchanged);
}

// Every identity setting is a selector key, its value checked and compared canonically.
TEST(Report, EveryIdentitySettingIsSelectable) {
  LoadedResult lora = measured("llama-3.2-1b", {500, 500, 500});
  lora.result.benchmark.tuning = Tuning::kLora;
  lora.result.benchmark.lora_rank = 8;
  lora.result.benchmark.mode = Mode::kGraph;
  lora.result.benchmark.threads = 4;
  for (const BenchmarkField& f : benchmark_fields()) {
    if (!f.identity) continue;
    const nlohmann::json value = f.resolved(lora.result.benchmark);
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (f.zero_means_none && (text.empty() || text == "0")) continue;  // "none": not selectable
    EXPECT_TRUE(ResultSelector::parse(f.key + "=\"" + text + "\"").matches(lora.result)) << f.key;
  }
  EXPECT_TRUE(ResultSelector::parse("lora_rank=8,mode=graph,hostname=").matches(lora.result));
  EXPECT_FALSE(ResultSelector::parse("lora_rank=16").matches(lora.result));
  const std::vector<LoadedResult> kept =
      select_results({lora, measured("vgg16", {1, 1, 1})}, "mode=graph");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].result.benchmark.model, "llama-3.2-1b");
  EXPECT_THROW(select_results({lora}, "mode=eager"), UsageError);
}

// A run of its model's own optimiser records none in its benchmark; `optimizer=sgd` still
// selects it, by the optimiser the result says ran.
TEST(Report, TheOptimizerSelectorMatchesARunOfTheModelsOwnOptimizer) {
  LoadedResult own = measured("resnet50", {500, 500, 500});
  own.result.benchmark.optimizer.clear();
  own.result.optimizer = "SGD momentum 0.9, weight decay 0.0001";
  LoadedResult named = measured("llama-3.2-1b", {100, 100, 100});
  named.result.benchmark.optimizer = "sgd";
  named.result.optimizer = "SGD momentum 0.9, weight decay 0";
  LoadedResult adamw = measured("bert-large", {50, 50, 50});
  adamw.result.benchmark.optimizer.clear();
  adamw.result.optimizer = "AdamW betas (0.9, 0.999), eps 1e-08, weight decay 0.01";
  const std::vector<LoadedResult> sgd = select_results({own, named, adamw}, "optimizer=sgd");
  ASSERT_EQ(sgd.size(), 2u);
  EXPECT_EQ(sgd[0].result.benchmark.model, "resnet50");
  EXPECT_EQ(sgd[1].result.benchmark.model, "llama-3.2-1b");
  EXPECT_TRUE(ResultSelector::parse("optimizer=adamw").matches(adamw.result));
}

TEST(Regress, FlagsATightTenPercentDropOnly) {
  const std::vector<LoadedResult> baseline = {
      measured("resnet50", {1000, 1002, 998}), measured("vgg16", {1000, 1002, 998}),
      measured("googlenet", {1000, 1200, 800}), measured("resnet101", {500, 501, 499})};
  const std::vector<LoadedResult> current = {
      measured("resnet50", {900, 902, 898}),    // -10 %, tight
      measured("vgg16", {970, 972, 968}),       // -3 %
      measured("googlenet", {900, 1150, 650}),  // -10 %, noisy
      measured("inception3", {300, 301, 299})};
  const RegressionReport report = check_regressions(baseline, current, {});
  EXPECT_EQ(row_for(report, "resnet50").verdict, Verdict::kRegression);
  EXPECT_LT(*row_for(report, "resnet50").p_value, 0.05);
  EXPECT_EQ(row_for(report, "vgg16").verdict, Verdict::kUnchanged);
  // -10 % within noise that hides slowdowns up to 100 %: not "unchanged" but inconclusive.
  EXPECT_EQ(row_for(report, "googlenet").verdict, Verdict::kInconclusive);
  EXPECT_GT(*row_for(report, "googlenet").p_value, 0.05);
  EXPECT_EQ(row_for(report, "resnet101").verdict, Verdict::kMissing);
  EXPECT_EQ(row_for(report, "inception3").verdict, Verdict::kNew);
  EXPECT_TRUE(report.failed());
  const std::string junit = render_junit(report);
  EXPECT_NE(junit.find("tests=\"5\" failures=\"3\" skipped=\"0\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure message=\"REGRESSION -10.0%"), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure message=\"INCONCLUSIVE -10.0%"), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure message=\"MISSING: in the baseline"), std::string::npos) << junit;
}

// regress --format: the terminal's table fitted to a width, and markdown, tidy CSV (a record per
// figure, numbers in full) and JSON from the same verdicts.
TEST(Regress, EachFormatCarriesTheVerdictsAndTheirFigures) {
  const RegressionReport report = check_regressions(
      {measured("resnet50", {1000, 1002, 998}), measured("vgg16", {1000, 1002, 998})},
      {measured("resnet50", {900, 902, 898}), measured("vgg16", {990, 1000, 998})}, {});
  const std::string table = render_regression(report, "table", 70);
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("detectable:", 0) != 0) {
      EXPECT_LE(line.size(), 70u) << line;
    }
  }
  EXPECT_EQ(render_regression(report, "table"), render_regression_table(report));
  const std::string csv = render_regression(report, "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "table,benchmark,column,value,spread_pct,text");
  const std::string resnet = row_for(report, "resnet50").benchmark;
  EXPECT_NE(csv.find("regress," + resnet + ",verdict,,,REGRESSION"), std::string::npos) << csv;
  EXPECT_NE(csv.find("regress," + resnet + ",change,-0.09999999999999998,,'-10.0%"),
            std::string::npos)
      << csv;  // 900 / 1000 - 1 in full
  EXPECT_NE(csv.find("regress," + resnet + ",baseline,1000,,1000.0"), std::string::npos) << csv;
  const nlohmann::json json = nlohmann::json::parse(render_regression(report, "json"));
  EXPECT_EQ(json["title"], "gpubench regress: FAILED");
  EXPECT_EQ(json["tables"][0]["rows"].size(), 2u);
  EXPECT_NE(render_regression(report, "markdown").find("| " + resnet + " | REGRESSION | 1000.0 |"),
            std::string::npos);
  EXPECT_THROW(render_regression(report, "html"), UsageError);
}

// report's table format on a terminal: the 47 published results' tables (466 columns as Markdown)
// within 100 columns, their cells wrapped; the CLI picks it only for a terminal (reading_output).
TEST(Report, TheTableFormatFitsTheWidth) {
  const Report report =
      build_report(load_results({std::string(GPUBENCH_SOURCE_DIR) + "/results/reference"}), {});
  const std::string markdown = render_report(report, "markdown");
  size_t widest = 0;
  std::istringstream markdown_lines(markdown);
  for (std::string line; std::getline(markdown_lines, line);)
    widest = std::max(widest, line.size());
  EXPECT_GT(widest, 400u);
  const std::string text = render_report(report, "table", 100);
  std::istringstream lines(text);
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_LE(line.size(), 100u) << line;  // ASCII but for ±, 2 bytes: still within 100 bytes
  }
  EXPECT_GT(count, 50u);
  EXPECT_NE(text.find("Throughput (global, median trial"), std::string::npos);
}

// fit's and scale's Markdown on a terminal: paragraphs and bullets wrapped, tables aligned, a
// table too wide cut into parts that repeat its first column; escapes undone, nothing lost.
TEST(MarkdownText, FitsTheWidthAndKeepsEveryCell) {
  const std::string markdown =
      "# A title that is long enough to wrap at forty columns\n\n"
      "- a bullet whose words wrap under its own text, not under the dash\n\n"
      "| GPUs | step ms | predicted sequences/sec | efficiency | algorithm |\n"
      "|---|---|---|---|---|\n"
      "| 2 | 68.70 | 872.2 | 72.0 % | ring \\| tree |\n"
      "| 1024 | 142.47 | 215336.9 | 34.7 % | hierarchical ring |\n";
  const std::string text = markdown_as_text(markdown, 40);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 40u) << line;
  for (const char* kept : {"68.70", "215336.9", "ring | tree", "hierarchical", "34.7 %", "(columns",
                           "\n  own text", "(column 4 of 4)"}) {
    EXPECT_NE(text.find(kept), std::string::npos) << kept << "\n" << text;
  }
  EXPECT_EQ(text.find("|---"), std::string::npos) << text;
  EXPECT_EQ(markdown_as_text("plain\n", 0), "plain\n");
}

// The gate fails on what it cannot vouch for: a baseline benchmark that did not run, and one
// whose trials could not have seen a slowdown of the threshold's size; each passes only when
// asked (regress --allow-missing, --allow-inconclusive), and then JUnit marks it skipped.
TEST(Regress, MissingAndInconclusiveFailTheGateUnlessAllowed) {
  const std::vector<LoadedResult> baseline = {measured("resnet50", {1000, 1002, 998}),
                                              measured("vgg16", {1000, 1400, 600})};
  const std::vector<LoadedResult> only_vgg = {measured("vgg16", {1000, 1300, 700})};
  RegressOptions options;
  const RegressionReport strict = check_regressions(baseline, only_vgg, options);
  EXPECT_EQ(row_for(strict, "resnet50").verdict, Verdict::kMissing);
  EXPECT_EQ(row_for(strict, "vgg16").verdict, Verdict::kInconclusive);
  EXPECT_TRUE(strict.failed());
  options.allow_missing = true;
  EXPECT_TRUE(check_regressions(baseline, only_vgg, options).failed()) << "still inconclusive";
  options.allow_inconclusive = true;
  const RegressionReport allowed = check_regressions(baseline, only_vgg, options);
  EXPECT_FALSE(allowed.failed());
  EXPECT_NE(row_for(allowed, "resnet50").note.find("(allowed)"), std::string::npos);
  const std::string junit = render_junit(allowed);
  EXPECT_NE(junit.find("failures=\"0\" skipped=\"2\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<skipped message=\"MISSING"), std::string::npos) << junit;
  EXPECT_NE(junit.find("<skipped message=\"INCONCLUSIVE"), std::string::npos) << junit;
  // Every baseline benchmark missing: the gate fails, it does not pass on nothing.
  EXPECT_TRUE(check_regressions(baseline, {}, {}).failed());
}

// Trial noise is multiplicative, so the test reads the trials' logarithms: a CPU night whose
// trials spread 64 % (one slowed threefold by a neighbour) is still 400-fold faster than a
// baseline, and 400-fold slower than another; on the throughputs themselves no baseline at all
// could have been significantly slower than those three trials (p=0.058 against 22 at best).
TEST(Regress, AManyfoldChangeIsNotHiddenByMultiplicativeNoise) {
  const LoadedResult night = measured("test-tiny-llama", {7005.5, 9448.2, 22635.3});
  const RegressionRow faster =
      row_for(check_regressions({measured("test-tiny-llama", {22.1, 22.1, 22.1})}, {night}, {}),
              "test-tiny-llama");
  EXPECT_EQ(faster.verdict, Verdict::kImprovement) << faster.note;
  EXPECT_LT(*faster.p_value, 0.01);
  const RegressionRow slower =
      row_for(check_regressions({measured("test-tiny-llama", {9.0e6, 9.0e6, 9.0e6})}, {night}, {}),
              "test-tiny-llama");
  EXPECT_EQ(slower.verdict, Verdict::kRegression) << slower.note;
  // A trial that measured nothing cannot be judged on logarithms.
  const RegressionRow zero =
      row_for(check_regressions({measured("test-tiny-llama", {22.1, 22.1, 22.1})},
                                {measured("test-tiny-llama", {7005.5, 0, 22635.3})}, {}),
              "test-tiny-llama");
  EXPECT_EQ(zero.verdict, Verdict::kCannotJudge);
  EXPECT_NE(zero.note.find("a trial's throughput is not positive"), std::string::npos) << zero.note;
}

// A throughput cannot fall by more than all of it: what noisy trials can detect is at most a
// halt (-100 %), never a figure past it or below zero.
TEST(Regress, TheDetectableSlowdownLiesBetweenNoneAndAHalt) {
  const RegressionReport report = check_regressions({measured("resnet50", {1000, 3000, 10})},
                                                    {measured("resnet50", {1000, 2900, 20})}, {});
  const RegressionRow& row = row_for(report, "resnet50");
  ASSERT_TRUE(row.detectable.has_value());
  EXPECT_GE(row.detectable->slowdown, 0.0);
  EXPECT_LE(row.detectable->slowdown, 1.0);
  EXPECT_EQ(row.detectable->text(), "-100.0%");
  EXPECT_NE(row.note.find("sees not even a halt"), std::string::npos) << row.note;
}

// A run whose trials spread more than regress could gate on at its 5 % threshold says so under its
// table, with the trials that would do; a quiet run, a single trial or a failed run says nothing.
TEST(Regress, ARunTooNoisyForTheGateWarnsUnderItsTable) {
  Result noisy;
  noisy.status = RunStatus::kOk;
  noisy.metrics.trials = {100, 60, 140};
  const std::string line = render_noise_line(noisy);
  EXPECT_EQ(line.rfind("warning: the trials spread 40.0% (CV): regress against a run like this one "
                       "has noise too high for the 5.0% threshold: sees ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("trials a side would see 5.0% (--repeat)\n"), std::string::npos) << line;
  Result quiet = noisy;
  quiet.metrics.trials = {100, 100.5, 99.5};
  EXPECT_EQ(render_noise_line(quiet), "");
  Result one = noisy;
  one.metrics.trials = {100};
  EXPECT_EQ(render_noise_line(one), "");
  Result failed = noisy;
  failed.status = RunStatus::kFailed;
  EXPECT_EQ(render_noise_line(failed), "");
}

// A generation's bytes under its table are human-sized: bytes below a KiB, else KiB, MiB or GiB.
TEST(Regress, AGenerationsBytesUnderItsTableAreHumanSized) {
  Result r;
  r.status = RunStatus::kOk;
  InferenceMetrics& m = r.metrics.inference;
  m.present = true;
  m.kv_cache_bytes = 3072;
  m.kv_cache_bytes_per_token = 256;
  m.weight_bytes_per_decoded_token = int64_t{15} << 30;
  m.kernels_per_decode_step = 332;
  const std::string lines = render_inference_lines(r);
  EXPECT_NE(lines.find("kernels a decode step: 332 (counted in its CUDA graph)\n"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("key/value cache: 3.0 KiB (256 bytes per token of a sequence)"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("weights read per decoded token: 15.0 GiB\n"), std::string::npos) << lines;
}

// The verdict is the same whatever the throughputs' magnitude: at 1e80 and beyond the squares
// in the statistics overflowed, p came out NaN and real slowdowns of 50-100 % read "unchanged".
TEST(Regress, AVerdictDoesNotDependOnTheMagnitudeOfTheThroughputs) {
  const std::vector<double> base = {1000, 1010, 990, 1005, 995};
  for (const double slowdown : {0.5, 0.9, 0.1, 0.0}) {
    for (double scale = 1e-300; scale <= 1.1e300; scale *= 1e20) {
      std::vector<double> b, c;
      for (double t : base) {
        b.push_back(t * scale);
        c.push_back(t * (1 - slowdown) * scale);
      }
      const RegressionReport report =
          check_regressions({measured("resnet50", b)}, {measured("resnet50", c)}, {});
      const RegressionRow& row = row_for(report, "resnet50");
      EXPECT_EQ(row.verdict, slowdown > 0 ? Verdict::kRegression : Verdict::kUnchanged)
          << "slowdown " << slowdown << " at scale " << scale << ": " << row.note;
      ASSERT_TRUE(row.change.has_value());
      EXPECT_NEAR(*row.change, -slowdown, 1e-9);
    }
  }
}

// A statistic that cannot be computed fails the gate, never passes it as "unchanged".
TEST(Regress, ANonFiniteStatisticFailsClosed) {
  const RegressionReport report = check_regressions({measured("resnet50", {1000, 1010, NAN})},
                                                    {measured("resnet50", {500, 505, 495})}, {});
  const RegressionRow& row = row_for(report, "resnet50");
  EXPECT_EQ(row.verdict, Verdict::kCannotJudge) << row.note;
  EXPECT_EQ(row.note.rfind("cannot judge: ", 0), 0u) << row.note;
  EXPECT_TRUE(report.failed());
  EXPECT_NE(render_junit(report).find("<failure message=\"CANNOT JUDGE"), std::string::npos);
}

// Five trials a side with a stdev of exactly 10 around 1000 (CV 1 %): the smallest slowdown the
// gate can flag 80 % of the time is 17.382 / 1000 = 1.74 % (worked by hand in statistics_test).
TEST(Regress, SaysTheSmallestSlowdownItsTrialsCouldFlag) {
  const double a = 12.649110640673518, b = 6.324555320336759;  // sqrt(160), sqrt(40)
  const std::vector<double> tight = {1000 - a, 1000 - b, 1000, 1000 + b, 1000 + a};
  const RegressionReport report = check_regressions(
      {measured("resnet50", tight), measured("googlenet", {1000, 1200, 800})},
      {measured("resnet50", tight), measured("googlenet", {1000, 1150, 850})}, {});
  const RegressionRow& resnet = row_for(report, "resnet50");
  ASSERT_TRUE(resnet.detectable.has_value());
  EXPECT_NEAR(resnet.detectable->slowdown, 0.017382, 2e-6);
  EXPECT_FALSE(resnet.detectable->too_noisy(0.05));
  EXPECT_EQ(resnet.note, "within the 5.0% threshold");
  // googlenet's trials (CV 20 % and 15 %) cannot see 5 %: the note says so and what would.
  const RegressionRow& googlenet = row_for(report, "googlenet");
  ASSERT_TRUE(googlenet.detectable.has_value());
  EXPECT_TRUE(googlenet.detectable->too_noisy(0.05));
  EXPECT_NE(googlenet.note.find("noise too high for the 5.0% threshold: sees -"), std::string::npos)
      << googlenet.note;
  EXPECT_NE(googlenet.note.find(std::to_string(googlenet.detectable->trials_needed) +
                                " trials a side would see 5.0%"),
            std::string::npos)
      << googlenet.note;
  const std::string table = render_regression_table(report);
  EXPECT_NE(table.find("-1.7%"), std::string::npos) << table;
  EXPECT_NE(table.find("1 of 2 benchmarks are too noisy for the 5.0% threshold to mean anything: "
                       "googlenet"),
            std::string::npos)
      << table;
  // One trial: nothing to judge the noise by.
  const RegressionReport single =
      check_regressions({measured("resnet50", {1000})}, {measured("resnet50", {1000})}, {});
  EXPECT_FALSE(single.rows[0].detectable.has_value());
}

TEST(Regress, ImprovementsAndFailures) {
  LoadedResult failed = measured("resnet50", {1});
  failed.result.status = RunStatus::kOom;
  failed.result.error = "CUDA out of memory";
  const RegressionReport report =
      check_regressions({measured("resnet50", {100, 101, 99}), measured("vgg16", {100, 101, 99})},
                        {failed, measured("vgg16", {120, 121, 119})}, {});
  EXPECT_EQ(row_for(report, "resnet50").verdict, Verdict::kFailed);
  EXPECT_EQ(row_for(report, "vgg16").verdict, Verdict::kImprovement);
  EXPECT_TRUE(report.failed());
  const RegressionReport clean = check_regressions({measured("vgg16", {100, 101, 99})},
                                                   {measured("vgg16", {120, 121, 119})}, {});
  EXPECT_FALSE(clean.failed());
}

TEST(ResultFiles, SchemaVersionsAreReadOrRefusedClearly) {
  testing::ScratchDirectory dir("schemas");
  nlohmann::json document =
      nlohmann::json::parse(std::ifstream(kFixtures + "/a40_vgg16_fp16_x1.json"));
  document["schema"] = "gpubench.result/1.3";  // a later minor version: extra fields only
  document["new_field"] = 1;
  std::ofstream(dir.file("minor.json")) << document.dump();
  EXPECT_DOUBLE_EQ(read_result_file(dir.file("minor.json")).metrics.throughput, 450);
  document["schema"] = "gpubench.result/2";
  std::ofstream(dir.file("major.json")) << document.dump();
  try {
    read_result_file(dir.file("major.json"));
    FAIL();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("newer than this gpubench reads"), std::string::npos);
  }
  // "01" is version 1 with a leading zero, not a newer one; "00" is not newer either.
  document["schema"] = "gpubench.result/01";
  std::ofstream(dir.file("padded.json")) << document.dump();
  EXPECT_EQ(read_result_file(dir.file("padded.json")).schema, "gpubench.result/01");
  document["schema"] = "gpubench.result/00";
  std::ofstream(dir.file("zero.json")) << document.dump();
  try {
    read_result_file(dir.file("zero.json"));
    FAIL();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("not one this gpubench reads"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace gpubench

namespace gpubench {
namespace {

LoadedResult on_datasheet(const std::string& gpu, const std::string& entry, double peak,
                          double bandwidth, double tdp, double throughput) {
  LoadedResult l = measured("resnet50", {throughput});
  Result& r = l.result;
  r.system.gpu_name = gpu;
  r.datasheet = {true, entry, "device name", "fp16_tflops", peak, "url", bandwidth, tdp};
  r.metrics.achieved_fraction_of_peak = 0.125;
  r.telemetry.available = true;
  r.telemetry.energy_per_sample_j = 0.25;
  r.telemetry.samples_per_joule = 4;
  return l;
}

// By hand: measured 2524 / 1262 = 2.000; peak 362.05 / 149.7 = 2.419; bandwidth 864 / 696 =
// 1.241; TDP 350 / 300 = 1.167.
TEST(Report, EfficiencyTablesAndDatasheetRatiosInCompare) {
  const LoadedResult a40 = on_datasheet("NVIDIA A40", "A40", 149.7, 696, 300, 1262);
  const LoadedResult l40s = on_datasheet("NVIDIA L40S", "L40S", 362.05, 864, 350, 2524);
  const std::string compared = render_markdown(build_comparison({a40}, {l40s}, "A40", "L40S"));
  EXPECT_NE(compared.find("| model | precision | gpus | setup | A40 | L40S | B/A | peak B/A | "
                          "bandwidth B/A | TDP B/A |"),
            std::string::npos)
      << compared;
  EXPECT_NE(compared.find("| 1262.0 | 2524.0 | 2.000 | 2.419 | 1.241 | 1.167 |"), std::string::npos)
      << compared;
  const std::string md = render_markdown(build_report({a40, l40s}, {}));
  EXPECT_NE(md.find("| 12.5% of 149.7 (A40) | 12.5% of 362.1 (L40S) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.250 J (4.0/J) | 0.250 J (4.0/J) |"), std::string::npos) << md;
  Result run = l40s.result;
  run.telemetry.mean_power_w = 300;
  run.telemetry.energy_j = 600;
  run.telemetry.energy_source = "energy counter";
  run.telemetry.devices.resize(1);
  run.telemetry.median_sm_clock_mhz = 2520;
  run.telemetry.min_sm_clock_mhz = 2400;
  run.telemetry.max_temperature_c = 71;
  run.telemetry.throttle_reasons = {{"sw_power_cap", 0.25}};
  run.telemetry.flags = {"a timed window lasted 0.5 s"};
  EXPECT_EQ(render_efficiency_lines(run),
            "telemetry: 300.0 W mean over 1 device(s), 600.0 J (energy counter), 0.2500 J/sample, "
            "SM clock median 2520 MHz (min 2400), max 71 C, sw_power_cap 25%\n"
            "  note: a timed window lasted 0.5 s\n"
            "datasheet: L40S, 12.5% of the fp16_tflops peak (362.1 per device)\n");
  run.telemetry = unavailable_telemetry("no RAPL package domains", "rapl", 100);
  run.datasheet = DatasheetInfo{};
  run.datasheet.reason = "CPU run";
  EXPECT_EQ(render_efficiency_lines(run),
            "telemetry: none (no RAPL package domains)\ndatasheet: unmatched (CPU run)\n");
  LoadedResult unmatched = l40s;
  unmatched.result.datasheet = DatasheetInfo{};
  unmatched.result.system.gpu_name = "a card no datasheet lists";
  EXPECT_NE(render_markdown(build_comparison({a40}, {unmatched}, "A40", "L40S"))
                .find("| 2.000 | - | - | - |"),
            std::string::npos);
}

// BIZON's and Lambda's A40 ResNet-50 fp16 figures (1262 and 653: different harnesses) are both
// shown, each with its source, the B/A as the range over them (2000 / 1262 = 1.585 to
// 2000 / 653 = 3.063), the disagreement said under the table; the published sides record no
// memory, and the datasheet ratios come from the cards' names (peak: the built-in database's
// fp16 tensor rates; not asserted as figures here, only that they are filled).
TEST(Compare, EveryPublishedFigureWithItsSourceAndTheirDisagreement) {
  const auto published = [](const std::string& gpu, const std::string& source, double value,
                            const std::string& model = "resnet50") {
    LoadedResult l = measured(model, {value});
    l.result.status = RunStatus::kPublished;
    l.result.source = source;
    l.result.system.gpu_name = gpu;
    l.result.benchmark.batch_size = 0;
    l.result.benchmark.bucket_mb = 0;
    return l;
  };
  const LoadedResult bizon = published("NVIDIA A40", "BIZON comparison page", 1262);
  const LoadedResult lambda = published("NVIDIA A40", "Lambda deeplearning-benchmark", 653);
  const LoadedResult l40s = published("NVIDIA L40S", "BIZON comparison page", 2000);
  const Report report = build_comparison({bizon, lambda}, {l40s}, "A40", "L40S");
  const std::string md = render_markdown(report);
  EXPECT_NE(md.find("| 1262.0 (published, BIZON [1]); 653.0 (published, Lambda [2]) | 2000.0 "
                    "(published, BIZON [1]) | 1.585 to 3.063 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- A40, resnet50 fp16 x1: its 2 figures differ up to 1.93x"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- [1] BIZON comparison page\n- [2] Lambda deeplearning-benchmark\n"),
            std::string::npos)
      << md;
  const ReportRow& row = report.tables.front().rows.front();
  for (size_t column = 3; column < 6; ++column) {
    EXPECT_TRUE(row.cells[column].value.has_value()) << md;  // peak, bandwidth, TDP B/A
  }
  // A range is no ratio to average: the family mean leaves the row out, and with no other row
  // there is no table of means at all (not an empty one).
  EXPECT_EQ(md.find("Geometric-mean"), std::string::npos) << md;
  // A figure published for one card only still stands beside the two cards' datasheet ratios.
  const LoadedResult vgg = published("NVIDIA A40", "BIZON comparison page", 450, "vgg16");
  const Report one_sided = build_comparison({vgg}, {l40s}, "A40", "L40S");
  const ReportRow& vgg_row = one_sided.tables.front().rows.back();
  ASSERT_EQ(vgg_row.labels.front(), "vgg16");
  EXPECT_EQ(vgg_row.cells[1].text, "only in A");
  for (size_t column = 3; column < 6; ++column) {
    EXPECT_EQ(vgg_row.cells[column].text, row.cells[column].text) << render_markdown(one_sided);
  }
  const std::string one = render_markdown(build_comparison({lambda}, {l40s}, "A40", "L40S"));
  EXPECT_NE(one.find("| 653.0 (published, Lambda [1]) | 2000.0 (published, BIZON [2]) | 3.063 |"),
            std::string::npos)
      << one;
}

}  // namespace
}  // namespace gpubench

namespace gpubench {
namespace {

// A language-model result at `precision` on `gpu`, with the datasheet peak of that precision.
LoadedResult bert_run(const std::string& gpu, const std::string& entry, Precision precision,
                      double peak, double throughput) {
  LoadedResult l = measured("bert-large", {throughput});
  Result& r = l.result;
  const ResolvedBenchmark hand_made = r.benchmark;
  r.benchmark = with_fixed_defaults({});  // a file gpubench reads back: every setting in range
  r.benchmark.model = hand_made.model;
  r.benchmark.device = hand_made.device;
  r.benchmark.threads = 1;  // decided by resolve, so without a fixed default
  r.status = RunStatus::kOk;
  r.model_family = "language-model";
  r.benchmark.precision = precision;
  r.benchmark.batch_size = 32;
  r.benchmark.seq_len = 128;
  r.metrics.throughput_unit = "sequences/sec";
  r.system.gpu_name = gpu;
  const std::string quantity = precision == Precision::kFp8 ? "fp8_tflops" : "bf16_tflops";
  r.datasheet = {true, entry, "device name", quantity, peak, "url", 0, 0};
  if (precision == Precision::kFp8) {
    r.benchmark.fp8_recipe = "tensorwise";
    r.metrics.fp8_matmul_flop_share = 0.9;
  }
  return l;
}

// By hand: 3000 / 1000 = 3.000; peak B/A: L40S's FP8 733 over A40's BF16 149.7 = 4.896.
TEST(Compare, A40Bf16BesideL40sFp8InOneRowWhenThePrecisionIsEachSidesOwn) {
  const LoadedResult a40 = bert_run("NVIDIA A40", "A40", Precision::kBf16, 149.7, 1000);
  const LoadedResult l40s = bert_run("NVIDIA L40S", "L40S", Precision::kFp8, 733, 3000);
  const std::string strict = render_markdown(build_comparison({a40}, {l40s}, "A40", "L40S"));
  EXPECT_NE(strict.find("only in A"), std::string::npos) << strict;
  const std::string joined =
      render_markdown(build_comparison({a40}, {l40s}, "A40", "L40S", {"precision"}));
  EXPECT_NE(joined.find("| bert-large | per side | 1 | batch 32 seq 128 | 1000.0 [bf16] | 3000.0 "
                        "[fp8 tensorwise] | 3.000 | 4.896 |"),
            std::string::npos)
      << joined;
}

TEST(Specs, MeasuredFp8OverBf16PerCardBesideTheDatasheetsRatio) {
  const std::vector<LoadedResult> results = {
      bert_run("NVIDIA A40", "A40", Precision::kBf16, 149.7, 1000),
      bert_run("NVIDIA L40S", "L40S", Precision::kBf16, 362.05, 2000),
      bert_run("NVIDIA L40S", "L40S", Precision::kFp8, 733, 3000)};
  const ReportTable table = fp8_speedup_table(results, datasheets());
  ASSERT_EQ(table.rows.size(), 1u) << "the A40 has no fp8 run";
  const ReportRow& row = table.rows.front();
  EXPECT_EQ(row.labels, (std::vector<std::string>{"NVIDIA L40S", "bert-large x1 batch 32 seq 128",
                                                  "tensorwise"}));
  std::vector<std::string> cells;
  for (const ReportCell& cell : row.cells) cells.push_back(cell.text);
  // 3000 / 2000 = 1.5; the datasheet's 733 / 362.05 = 2.02.
  EXPECT_EQ(cells, (std::vector<std::string>{"2000", "3000", "1.5", "90.0%", "2.02"}));
  EXPECT_EQ(fp8_speedup_table({results[0]}, datasheets()).title,
            "Measured FP8/BF16 speed-up: no benchmark among the results ran in both");
}

// Through the binary: selectors that both pin the precision join across it, and specs reads
// the result files.
TEST(Compare, SelectorsPinningThePrecisionOnBothSidesJoinAcrossIt) {
  testing::ScratchDirectory dir("compare-fp8");
  write_json_atomically(
      dir.file("a40.json"),
      result_to_json(bert_run("NVIDIA A40", "A40", Precision::kBf16, 149.7, 1000).result));
  write_json_atomically(
      dir.file("l40s.json"),
      result_to_json(bert_run("NVIDIA L40S", "L40S", Precision::kFp8, 733, 3000).result));
  write_json_atomically(
      dir.file("l40s-bf16.json"),
      result_to_json(bert_run("NVIDIA L40S", "L40S", Precision::kBf16, 362.05, 2000).result));
  const auto compared = testing::run_gpubench(
      "compare 'gpu=\"NVIDIA A40\",precision=bf16' 'gpu=\"NVIDIA L40S\",precision=fp8' --results " +
      dir.path());
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  EXPECT_NE(compared.output.find("| 1000.0 [bf16] | 3000.0 [fp8 tensorwise] | 3.000 | 4.896 |"),
            std::string::npos)
      << compared.output;
  const auto specs = testing::run_gpubench("specs A40 L40S --results " + dir.path());
  ASSERT_EQ(specs.exit_code, 0) << specs.output;
  EXPECT_NE(
      specs.output.find("| NVIDIA L40S | bert-large x1 batch 32 seq 128 | tensorwise | 2000 | "
                        "3000 | 1.5 | 90.0% | 2.02 |"),
      std::string::npos)
      << specs.output;
}

}  // namespace
}  // namespace gpubench
