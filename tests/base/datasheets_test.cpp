// The datasheet database (data/datasheets.json) and `gpubench specs`: the shipped file passes
// every check, bad files are refused by name, GPUs match only exactly, and the tables' ratios
// are the hand-computed ones, with unlike quantities refused.
#include <gtest/gtest.h>

#include "datasheets/datasheet_database.h"
#include "datasheets/run_efficiency.h"
#include "reporting/specs_table.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

const DatasheetDatabase& database() {
  return datasheets();
}

TEST(Datasheets, TheShippedFileHasEveryRequiredEntryWithSourcedFigures) {
  for (const char* name : {"A40", "L40S", "A100-40GB-PCIe", "A100-80GB-PCIe", "A100-40GB-SXM",
                           "A100-80GB-SXM", "H100-PCIe", "H100-SXM", "H200-SXM", "RTX-A6000",
                           "RTX-6000-Ada", "RTX-3090", "RTX-4090", "trainium-trn1"}) {
    const Accelerator* a = database().find(name);
    ASSERT_NE(a, nullptr) << name;
    for (const char* key : {"fp32_tflops", "bf16_tflops", "memory_gb", "memory_bandwidth_gbs",
                            "tdp_w", "memory_type", "host_interface", "form_factor"}) {
      EXPECT_NE(a->figure(key), nullptr) << name << " " << key;
    }
    for (const auto& [key, figure] : a->figures) {
      EXPECT_EQ(database().sources.count(figure.used.source), 1u) << name << " " << key;
      EXPECT_EQ(figure.quantity->key, key);
    }
  }
    // The current cards a lab buys or compares: each with its memory and bandwidth, and every
  // figure sourced. Some sources give no tensor rates (RTX PRO 6000) or no power (MI325X,
  // Trainium2): those figures are absent, never guessed.
  for (const char* name : {"B200", "GB200", "L4", "L40", "RTX-PRO-6000-Blackwell", "MI300X",
                           "MI325X", "Gaudi3", "trainium2"}) {
    const Accelerator* a = database().find(name);
    ASSERT_NE(a, nullptr) << name;
    for (const char* key : {"memory_gb", "memory_bandwidth_gbs", "memory_type", "architecture"}) {
      EXPECT_NE(a->figure(key), nullptr) << name << " " << key;
    }
    for (const auto& [key, figure] : a->figures) {
      EXPECT_EQ(database().sources.count(figure.used.source), 1u) << name << " " << key;
    }
  }
  EXPECT_DOUBLE_EQ(database().find("L40")->figure("bf16_tflops")->used.number, 181.05);
  EXPECT_DOUBLE_EQ(database().find("B200")->figure("memory_gb")->used.number, 192);
  EXPECT_EQ(database().find("B200")->figure("memory_gb")->alternatives.size(), 2u);
  EXPECT_EQ(database().find("RTX-PRO-6000-Blackwell")->figure("bf16_tflops"), nullptr);
// Where sources disagree both are kept, and AWS's own figure is the one used.
  const Figure* trainium_bf16 = database().find("trainium")->figure("bf16_tflops");
  EXPECT_DOUBLE_EQ(trainium_bf16->used.number, 190);
  ASSERT_EQ(trainium_bf16->alternatives.size(), 1u);
  EXPECT_DOUBLE_EQ(trainium_bf16->alternatives[0].number, 210);
  EXPECT_EQ(trainium_bf16->alternatives[0].source, "seed-trainium-vs-l40s");
}

TEST(Datasheets, NamesIgnoreCaseAndSeparators) {
  EXPECT_EQ(database().find("l40s")->name, "L40S");
  EXPECT_EQ(database().find("h100_sxm")->name, "H100-SXM");
  EXPECT_EQ(database().find("A100 80GB SXM")->name, "A100-80GB-SXM");
  EXPECT_EQ(database().find("trn1")->name, "trainium-trn1");
  EXPECT_EQ(database().find("a4000"), nullptr);
}

nlohmann::json minimal_file() {
  return nlohmann::json::parse(R"({
    "schema": "gpubench.datasheets/1",
    "sources": {"s": {"title": "t", "url": "u"}},
    "accelerators": [{"name": "X", "match": {"device_names": ["NVIDIA X"], "memory_gib": [10, 20]},
                      "figures": {"bf16_tflops": {"value": 100, "unit": "TFLOPS", "source": "s"}}}]
  })");
}

std::string refusal(const nlohmann::json& file) {
  return testing::usage_error_of([&] { parse_datasheets(file, "f.json"); });
}

TEST(Datasheets, BadFilesAreRefusedNamingTheEntryAndField) {
  EXPECT_EQ(refusal(minimal_file()), "");
  auto file = minimal_file();
  file["accelerators"][0]["figures"]["bf16_tflops"]["unit"] = "GFLOPS";
  EXPECT_EQ(refusal(file),
            "datasheets 'f.json': 'X'.figures.bf16_tflops.unit must be 'TFLOPS', got 'GFLOPS'");
  file = minimal_file();
  file["accelerators"][0]["figures"]["bf16_tflops"]["value"] = 100000;  // GFLOPS entered as TFLOPS
  EXPECT_NE(refusal(file).find("must be a number from 1 to 20000 TFLOPS"), std::string::npos);
  file = minimal_file();
  file["accelerators"][0]["figures"]["bf16_tflops"]["source"] = "nowhere";
  EXPECT_NE(refusal(file).find("source 'nowhere' is not one of the file's sources"),
            std::string::npos);
  file = minimal_file();
  file["accelerators"][0]["figures"]["bf16_sparse_tflops"] = {
      {"value", 150}, {"unit", "TFLOPS"}, {"source", "s"}};
  EXPECT_NE(refusal(file).find("is not twice the dense figure"), std::string::npos);
  file = minimal_file();
  file["accelerators"][0]["figures"]["bf16_flops"] = {{"value", 1}, {"source", "s"}};
  EXPECT_NE(refusal(file).find("unknown quantity 'bf16_flops'"), std::string::npos);
  file = minimal_file();
  file["accelerators"].push_back(file["accelerators"][0]);
  file["accelerators"][1]["name"] = "Y";
  EXPECT_NE(refusal(file).find("device 'NVIDIA X' matches both X and Y"), std::string::npos);
  file["accelerators"][1]["name"] = "x";
  EXPECT_NE(refusal(file).find("the name 'x' is used twice"), std::string::npos);
}

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(Datasheets, DevicesMatchByNameAndMemoryNeverByGuess) {
  EXPECT_EQ(match_device(database(), "NVIDIA A100-SXM4-80GB", 80 * kGiB).entry->name,
            "A100-80GB-SXM");
  EXPECT_EQ(match_device(database(), "NVIDIA A100-SXM4-40GB", 40 * kGiB).entry->name,
            "A100-40GB-SXM");
  EXPECT_EQ(match_device(database(), "NVIDIA A100 80GB PCIe", 80 * kGiB).entry->name,
            "A100-80GB-PCIe");
  EXPECT_EQ(match_device(database(), "NVIDIA H200", 143771LL << 20).entry->name, "H200-SXM");
  const DeviceMatch wrong_memory = match_device(database(), "NVIDIA A100-SXM4-40GB", 80 * kGiB);
  EXPECT_EQ(wrong_memory.entry, nullptr);
  EXPECT_EQ(wrong_memory.reason,
            "device 'NVIDIA A100-SXM4-40GB' is listed for A100-40GB-SXM but "
            "its 80.0 GiB is outside 36-44 GiB");
  const DeviceMatch unknown = match_device(database(), "NVIDIA H100 NVL", 94 * kGiB);
  EXPECT_EQ(unknown.entry, nullptr);
  EXPECT_EQ(unknown.reason, "no datasheet entry lists device 'NVIDIA H100 NVL'");
  // A published figure records no memory size: its name alone chooses, where one entry lists it.
  const DeviceMatch published = match_device(database(), "NVIDIA A40", 0);
  ASSERT_NE(published.entry, nullptr);
  EXPECT_EQ(published.entry->name, "A40");
  EXPECT_EQ(match_device(database(), "NVIDIA H100 NVL", 0).entry, nullptr);
  DatasheetDatabase twice = database();
  twice.accelerators.push_back(*published.entry);
  const DeviceMatch ambiguous = match_device(twice, "NVIDIA A40", 0);
  EXPECT_EQ(ambiguous.entry, nullptr);
  EXPECT_EQ(ambiguous.reason,
            "device 'NVIDIA A40' is listed by 2 entries and no memory size was recorded to choose");
}

// A bf16 result of `ranks` L40S cards.
Result l40s_result(int ranks) {
  Result r;
  r.benchmark.device = DeviceKind::kCuda;
  r.benchmark.precision = Precision::kBf16;
  r.distributed.world_size = ranks;
  r.system.gpu_name = "NVIDIA L40S";
  r.system.gpu_memory_bytes = 45 * kGiB;
  return r;
}

TEST(Datasheets, AResultGetsThePeakOfThePrecisionThatRan) {
  Result r = l40s_result(4);
  r.metrics.achieved_tflops = 362.05;  // a quarter of 4 x 362.05
  attach_datasheet(database(), r);
  EXPECT_TRUE(r.datasheet.matched);
  EXPECT_EQ(r.datasheet.entry, "L40S");
  EXPECT_EQ(r.datasheet.peak_quantity, "bf16_tflops");
  EXPECT_DOUBLE_EQ(r.datasheet.peak_tflops, 362.05);
  EXPECT_DOUBLE_EQ(r.datasheet.memory_bandwidth_gbs, 864);
  EXPECT_DOUBLE_EQ(r.datasheet.tdp_w, 350);
  EXPECT_DOUBLE_EQ(r.metrics.achieved_fraction_of_peak, 0.25);
  r.benchmark.precision = Precision::kFp32;  // fp32 is the non-tensor FP32 rate
  attach_datasheet(database(), r);
  EXPECT_EQ(r.datasheet.peak_quantity, "fp32_tflops");
  EXPECT_DOUBLE_EQ(r.datasheet.peak_tflops, 91.6);
  EXPECT_DOUBLE_EQ(r.metrics.achieved_fraction_of_peak, 362.05 / (4 * 91.6));
  r.benchmark.precision = Precision::kFp8;  // the dense FP8 rate, not the sparse one
  attach_datasheet(database(), r);
  EXPECT_EQ(r.datasheet.peak_quantity, "fp8_tflops");
  EXPECT_DOUBLE_EQ(r.datasheet.peak_tflops, 733);
  EXPECT_DOUBLE_EQ(r.metrics.achieved_fraction_of_peak, 362.05 / (4 * 733));
  r.system.gpu_name = "NVIDIA L4";
  attach_datasheet(database(), r);
  EXPECT_FALSE(r.datasheet.matched);
  EXPECT_DOUBLE_EQ(r.metrics.achieved_fraction_of_peak, 0);
}

// The decode ceiling, worked by hand: Llama 3.1 70B's int4 decode on two L40S replicas reads
// 37.0 GB of weights and 0.5 GB of cache a token; 864 GB/s each gives 864e9 / 37.5e9 = 23.04
// tokens/s a replica, 46.08 both; 23.04 decoded tokens/s is half of it.
TEST(Datasheets, TheDecodeCeilingIsTheBandwidthOverTheBytesOfAToken) {
  Result r = l40s_result(2);
  r.metrics.inference.decode_tokens_per_second = 23.04;
  r.metrics.inference.bytes_per_decoded_token = 37'500'000'000;
  attach_datasheet(database(), r);
  const InferenceMetrics& inference = r.metrics.inference;
  EXPECT_DOUBLE_EQ(inference.ceiling_bandwidth_gbs, 864);
  EXPECT_EQ(inference.ceiling_bandwidth_source, "datasheet L40S");
  EXPECT_DOUBLE_EQ(inference.decode_ceiling_tokens_per_second, 46.08);
  EXPECT_DOUBLE_EQ(inference.decode_ceiling_fraction, 0.5);
  // One replica over the two as tensor-parallel ranks, each reading its half: 37.5 GB a token
  // is a rank's, and the replica's ceiling is one rank's.
  r.distributed.tensor_parallel = 2;
  attach_datasheet(database(), r);
  EXPECT_DOUBLE_EQ(r.metrics.inference.decode_ceiling_tokens_per_second, 23.04);
  r.distributed.tensor_parallel = 1;
  // No datasheet entry: no ceiling, never a guess.
  r.system.gpu_name = "NVIDIA L4";
  attach_datasheet(database(), r);
  EXPECT_DOUBLE_EQ(r.metrics.inference.decode_ceiling_tokens_per_second, 0);
  EXPECT_EQ(r.metrics.inference.ceiling_bandwidth_source, "");
  // The CPU: the measured copy's bandwidth, where the run measured it.
  r.benchmark.device = DeviceKind::kCpu;
  r.distributed.world_size = 1;
  attach_datasheet(database(), r);
  EXPECT_DOUBLE_EQ(r.metrics.inference.decode_ceiling_tokens_per_second, 0);
  r.system.cpu_memory_bandwidth_gbs = 30;
  attach_datasheet(database(), r);
  EXPECT_EQ(r.metrics.inference.ceiling_bandwidth_source, "measured (CPU copy)");
  EXPECT_DOUBLE_EQ(r.metrics.inference.decode_ceiling_tokens_per_second, 0.8);
  EXPECT_DOUBLE_EQ(r.metrics.inference.decode_ceiling_fraction, 28.8);
  // Not a generation: nothing.
  r.metrics.inference.bytes_per_decoded_token = 0;
  attach_datasheet(database(), r);
  EXPECT_DOUBLE_EQ(r.metrics.inference.ceiling_bandwidth_gbs, 0);
}

const ReportTable& table_named(const Report& report, const std::string& id) {
  for (const ReportTable& t : report.tables) {
    if (t.id == id) return t;
  }
  throw std::runtime_error("no table " + id);
}

const ReportRow& row_labelled(const ReportTable& table, const std::string& label) {
  for (const ReportRow& row : table.rows) {
    if (row.labels.front() == label) return row;
  }
  throw std::runtime_error("no row " + label);
}

// By hand: BF16 dense 362.05 / 190 = 1.91; FP8 dense 733 / 190 = 3.86; bandwidth 864 / 820 =
// 1.05; BF16 per watt 362.05 / 350 = 1.03 and 190 / 500 = 0.38; bytes per FLOP 864 / 362050 =
// 0.00239 and 820 / 190000 = 0.00432.
TEST(Specs, RatiosAreBetweenLikeQuantitiesOnly) {
  const Report report = build_specs_report(database(), {"trainium-trn1", "L40S"});
  const ReportTable& specs = table_named(report, "specs");
  EXPECT_EQ(specs.columns,
            (std::vector<std::string>{"trainium-trn1", "L40S", "L40S / trainium-trn1"}));
  const ReportRow& bf16 = row_labelled(specs, "BF16 tensor, FP32 accumulate, dense");
  EXPECT_EQ(bf16.cells[2].text, "1.91x");
  EXPECT_NE(bf16.cells[0].text.find("190 ["), std::string::npos);
  EXPECT_NE(bf16.cells[0].text.find("(alt. 210 ["), std::string::npos);
  EXPECT_EQ(row_labelled(specs, "FP8 tensor, dense").cells[2].text, "3.86x");
  EXPECT_EQ(row_labelled(specs, "Memory bandwidth").cells[2].text, "1.05x");
  const ReportRow& per_watt = row_labelled(specs, "per watt: BF16 tensor, FP32 accumulate, dense");
  EXPECT_EQ(per_watt.cells[0].text, "0.38");
  EXPECT_EQ(per_watt.cells[1].text, "1.03");
  const ReportRow& per_flop =
      row_labelled(specs, "memory bytes per op: BF16 tensor, FP32 accumulate, dense");
  EXPECT_EQ(per_flop.cells[0].text, "0.00432");
  EXPECT_EQ(per_flop.cells[1].text, "0.00239");
  // A sparse row has no ratio where one side has no sparse figure.
  EXPECT_EQ(row_labelled(specs, "BF16 tensor, FP32 accumulate, 2:4 sparse").cells[2].text, "-");
  EXPECT_FALSE(table_named(report, "sources").rows.empty());
}

TEST(Specs, PinnedPrecisionsMustMatch) {
  const Report pinned = build_specs_report(database(), {"A40:fp16", "L40S"});
  const ReportTable& specs = table_named(pinned, "specs");
  EXPECT_EQ(row_labelled(specs, "FP16 tensor, FP32 accumulate, dense").cells[2].text, "2.42x");
  const std::string mixed = testing::usage_error_of([] {
    build_specs_report(database(), {"L40S:fp8", "trainium-trn1:bf16"});
  });
  EXPECT_EQ(mixed,
            "refusing to compare L40S FP8 tensor, dense with trainium-trn1 BF16 tensor, FP32 "
            "accumulate, dense: a ratio needs the same precision and sparsity on both sides (ask "
            "for L40S:fp8 trainium-trn1:fp8)");
  EXPECT_NE(testing::usage_error_of([] {
              build_specs_report(database(), {"L40S:bf16-sparse", "A40:bf16"});
            }).find("refusing to compare"),
            std::string::npos);
  EXPECT_EQ(testing::usage_error_of([] {
              build_specs_report(database(), {"A40:fp8", "L40S"});
            }),
            "A40 gives no fp8 figure; it gives: fp32, tf32, tf32-sparse, fp16, fp16-sparse, "
            "bf16, bf16-sparse, int8, int8-sparse");
  EXPECT_NE(testing::usage_error_of([] { build_specs_report(database(), {"L40S:fp4"}); })
                .find("unknown precision 'fp4' in 'L40S:fp4'; allowed: fp32, tf32, fp16, bf16, "
                      "fp8, int8"),
            std::string::npos);
}

TEST(Specs, TheCommandPrintsTablesAndRefusesUnknownNames) {
  auto run = testing::run_gpubench("specs A40 L40S --format csv");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // Tidy: a record per card, the figure in full beside its text with its source.
  for (const char* record :
       {"specs,\"BF16 tensor, FP32 accumulate, dense\",TFLOPS,,,A40,149.7,,149.7 [1]\n",
        "specs,\"BF16 tensor, FP32 accumulate, dense\",TFLOPS,,,L40S,362.05,,362.05 [2] (alt. 362 "
        "[4])\n",
        "specs,\"BF16 tensor, FP32 accumulate, dense\",TFLOPS,,,L40S / A40,2.4185036740146963,,"
        "2.42x\n"}) {
    EXPECT_NE(run.output.find(record), std::string::npos) << record << "\n" << run.output;
  }
  run = testing::run_gpubench("specs trainium-trn1 L40S");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("| BF16 tensor, FP32 accumulate, dense | TFLOPS |"), std::string::npos);
  testing::expect_usage_error("specs A40 L3", "unknown accelerator 'L3'; known: A40, L40S, ");
  testing::expect_usage_error("specs L40S:fp8 trainium-trn1:bf16", "refusing to compare");
  run = testing::run_gpubench("specs --format json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("\"accelerators\""), std::string::npos);
}

}  // namespace
}  // namespace gpubench
