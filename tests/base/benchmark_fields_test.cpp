// The field table: one description of every setting gives the request, the resolved JSON, the
// child's benchmark file and the identity.
#include "settings/benchmark_fields.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "settings/setting_order.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

// Every setting away from its default, so a field the JSON forgets shows up.
ResolvedBenchmark unusual() {
  ResolvedBenchmark b;
  b.model = "transformerxl-base";
  b.precision = Precision::kBf16;
  b.device = DeviceKind::kCuda;
  b.gpus = 4;
  b.tensor_parallel = 2;
  b.expert_parallel = 1;
  b.batch_size = 7;
  b.warmup_steps = 11;
  b.steps = 13;
  b.repeat = 5;
  b.seed = 17;
  b.channels_last = true;
  b.tgt_len = 64;
  b.mem_len = 32;
  b.threads = 3;
  b.bucket_mb = 100;
  b.timeout_s = 9;
  b.mode = Mode::kGraph;
  b.seq_len = 256;
  b.objects_per_image = 5;
  b.tuning = Tuning::kLora;
  b.lora_rank = 8;
  b.lora_alpha = 16;
  b.lora_targets = "q,v";
  b.activation_checkpointing = true;
  b.telemetry_interval_ms = 250;
  b.memory_limit = int64_t{3} << 30;
  b.task = Task::kInfer;
  b.prompt_len = 96;
  b.gen_len = 24;
  b.weights = "int4";
  b.weight_group = 64;
  b.deterministic = true;
  return b;
}

using testing::usage_error_of;

// Every setting away from its default, made from the table itself (so a new setting is in it
// with no edit here): for each field a valid value that is not its default.
nlohmann::json away_from_default(const BenchmarkField& f) {
  const nlohmann::json& d = f.default_value;
  switch (f.type) {
    case FieldType::kText:
      return d.is_string() ? d.get<std::string>() + "-other" : std::string("other");
    case FieldType::kFlag:
      return d.is_boolean() ? !d.get<bool>() : true;
    case FieldType::kChoice:
      for (auto it = f.choices.rbegin(); it != f.choices.rend(); ++it) {
        if (*it != d) return *it;
      }
      break;
    case FieldType::kByteSize:
      return int64_t{3} << 30;
    case FieldType::kInteger: {
      const int64_t base = d.is_number_integer() ? d.get<int64_t>() : f.min;
      return base < f.max ? base + 1 : base - 1;
    }
  }
  ADD_FAILURE() << f.key << " has one choice only";
  return d;
}

ResolvedBenchmark every_setting_away_from_its_default() {
  ResolvedBenchmark b = with_fixed_defaults({});
  for (const BenchmarkField& f : benchmark_fields()) f.resolve(b, away_from_default(f));
  return b;
}

TEST(BenchmarkFields, EveryFieldHasOneKeyAFlagAndHelp) {
  std::set<std::string> keys, flags;
  for (const BenchmarkField& f : benchmark_fields()) {
    EXPECT_TRUE(keys.insert(f.key).second) << f.key;
    EXPECT_TRUE(flags.insert(f.long_flag()).second) << f.key;
    EXPECT_FALSE(f.help.empty()) << f.key;
    // A default, or text saying who decides it.
    EXPECT_FALSE(f.default_text.empty()) << f.key;
  }
  EXPECT_EQ(find_benchmark_field("batch-size"), find_benchmark_field("batch_size"));
  EXPECT_EQ(find_benchmark_field("batch_size")->long_flag(), "--batch-size");
  EXPECT_EQ(find_benchmark_field("batchsize"), nullptr);
}

TEST(BenchmarkFields, EveryFieldIsAwayFromItsDefaultAndTakesPartInEquality) {
  const ResolvedBenchmark away = every_setting_away_from_its_default();
  const ResolvedBenchmark defaults = with_fixed_defaults({});
  for (const BenchmarkField& f : benchmark_fields()) {
    EXPECT_NE(f.resolved(away), f.resolved(defaults)) << f.key;
    EXPECT_EQ(check_field_value(f, f.resolved(away)), f.resolved(away)) << f.key;
    ResolvedBenchmark changed = away;
    f.resolve(changed, f.resolved(defaults));
    EXPECT_FALSE(changed == away) << f.key << " is left out of ResolvedBenchmark's ==";
    BenchmarkRequest request, other;
    f.request(request, f.resolved(away));
    EXPECT_FALSE(request == other) << f.key << " is left out of BenchmarkRequest's ==";
  }
}

TEST(BenchmarkFields, ResolvedJsonRoundTripsEveryField) {
  const ResolvedBenchmark b = every_setting_away_from_its_default();
  const nlohmann::json block = benchmark_to_json(b);
  EXPECT_EQ(block.size(), benchmark_fields().size());
  EXPECT_EQ(block["batch_size_per_device"], b.batch_size);  // the result schema's name
  EXPECT_TRUE(benchmark_from_json(block) == b);
}

TEST(BenchmarkFields, AnOlderResultIsAFullFineTuneWithNoLoraSettings) {
  nlohmann::json block = benchmark_to_json(unusual());
  for (const char* key : {"tuning", "lora_rank", "lora_alpha", "lora_targets", "seq_len",
                          "activation_checkpointing"}) {
    block.erase(key);
  }
  const ResolvedBenchmark read = benchmark_from_json(block);
  EXPECT_EQ(read.tuning, Tuning::kFull);
  EXPECT_EQ(read.lora_rank, 0);
  EXPECT_EQ(read.lora_alpha, 0);
  EXPECT_EQ(read.lora_targets, "");
  EXPECT_EQ(read.seq_len, 0);
  EXPECT_FALSE(read.activation_checkpointing);
  // Identity: LoRA's settings are part of the benchmark; a full one says nothing of them.
  const auto lora = identity_settings(unusual());
  for (const std::pair<std::string, std::string>& part :
       {std::pair<std::string, std::string>{"tuning", "LoRA"},
        {"lora_rank", "r8"},
        {"lora_alpha", "alpha 16"},
        {"lora_targets", "q,v"}}) {
    EXPECT_NE(std::find(lora.begin(), lora.end(), part), lora.end()) << part.second;
  }
  EXPECT_NE(std::find(lora.begin(), lora.end(),
                      std::pair<std::string, std::string>{"seq_len", "seq 256"}),
            lora.end());
  for (const auto& [key, text] : identity_settings(read)) EXPECT_NE(key, "tuning") << text;
}

TEST(BenchmarkFields, AnOlderResultWithoutANewerFieldGetsItsDefault) {
  nlohmann::json block = benchmark_to_json(unusual());
  block.erase("timeout");
  block.erase("bucket_mb");
  const ResolvedBenchmark read = benchmark_from_json(block);
  EXPECT_EQ(read.timeout_s, 300);
  EXPECT_EQ(read.bucket_mb, 25);
  block["steps"] = "many";
  EXPECT_THROW(benchmark_from_json(block), UsageError);
}

TEST(BenchmarkFields, ABenchmarkFileRoundTripsAndRefusesAnIncompleteOne) {
  testing::ScratchDirectory dir("benchmark-file");
  write_benchmark_file(dir.file("b.json"), every_setting_away_from_its_default());
  EXPECT_TRUE(read_benchmark_file(dir.file("b.json")) == every_setting_away_from_its_default());
  nlohmann::json document = testing::read_json(dir.file("b.json"));
  EXPECT_EQ(document["schema"], kBenchmarkSchema);
  document["benchmark"].erase("seed");
  std::ofstream(dir.file("incomplete.json")) << document.dump();
  EXPECT_NE(
      usage_error_of([&] { read_benchmark_file(dir.file("incomplete.json")); }).find("no 'seed'"),
      std::string::npos);
  std::ofstream(dir.file("other.json")) << R"({"schema": "gpubench.result/1"})";
  EXPECT_NE(usage_error_of([&] {
              read_benchmark_file(dir.file("other.json"));
            }).find("is not a gpubench.benchmark/1 document"),
            std::string::npos);
}

TEST(BenchmarkFields, FixedDefaultsComeFromTheTableAndTheRestIsLeftToTheResolver) {
  BenchmarkRequest request;
  request.steps = 7;
  const ResolvedBenchmark b = with_fixed_defaults(request);
  EXPECT_EQ(b.model, "resnet50");
  EXPECT_EQ(b.precision, Precision::kFp32);
  EXPECT_EQ(b.device, DeviceKind::kAuto);
  EXPECT_EQ(b.steps, 7);
  EXPECT_EQ(b.warmup_steps, 10);
  EXPECT_EQ(b.repeat, 3);
  EXPECT_EQ(b.seed, 42);
  EXPECT_EQ(b.bucket_mb, 25);
  EXPECT_EQ(b.timeout_s, 300);
  EXPECT_EQ(b.mode, Mode::kEager);
  EXPECT_EQ(b.batch_size, 0);  // the model's: resolve() asks it
  EXPECT_EQ(b.threads, 0);     // the machine's
}

TEST(BenchmarkFields, OneRuleAndOneMessagePerSetting) {
  const BenchmarkField& batch = *find_benchmark_field("batch_size");
  EXPECT_EQ(usage_error_of([&] { check_field_value(batch, 0); }),
            "batch_size must be an integer from 1 to 1048576, or max, got 0");
  EXPECT_EQ(usage_error_of([&] { field_value_from_text(batch, "0"); }),
            "batch_size must be an integer from 1 to 1048576, or max, got 0");
  EXPECT_EQ(usage_error_of([&] { field_value_from_text(batch, "8x"); }),
            "batch_size must be an integer from 1 to 1048576, or max, got '8x'");
  EXPECT_EQ(field_value_from_text(batch, "64"), 64);
  EXPECT_EQ(
      usage_error_of([&] { field_value_from_text(*find_benchmark_field("precision"), "fp4"); }),
      "precision must be one of fp32, tf32, fp16, bf16, fp8, got 'fp4'");
  EXPECT_EQ(usage_error_of([&] { check_field_value(*find_benchmark_field("channels_last"), 1); }),
            "channels_last must be true or false, got 1");
  EXPECT_EQ(usage_error_of([&] { check_field_value(*find_benchmark_field("seed"), -1); }),
            "seed must be zero or more, got -1");
  BenchmarkRequest request;
  EXPECT_NE(usage_error_of([&] {
              set_requested_field(request, "batchsize", 4);
            }).find("unknown benchmark setting 'batchsize'; known: model, precision"),
            std::string::npos);
  set_requested_field(request, "batch-size", 4);
  EXPECT_EQ(request.batch_size, 4);
}

TEST(BenchmarkFields, TheIdentityNamesEverySettingThatChangesTheWorkAndNothingElse) {
  ResolvedBenchmark b = unusual();
  const auto text = [](const ResolvedBenchmark& x) {
    std::string out;
    for (const auto& [key, value] : identity_settings(x)) out += (out.empty() ? "" : " ") + value;
    return out;
  };
  EXPECT_EQ(text(b),
            "transformerxl-base bf16 x4 tp 2 batch 7 channels-last tgt 64 mem 32 graph seq 256 "
            "5 objects LoRA r8 alpha 16 q,v checkpointed inference prompt 96 gen 24 int4 weights "
            "group 64 deterministic");
  b.task = Task::kTrain;  // buckets are training's: inference replicas exchange no gradients
  EXPECT_NE(text(b).find(" bucket 100 MiB "), std::string::npos) << text(b);
  b.task = Task::kInfer;
  ResolvedBenchmark other_run = b;  // how long and how often it is measured is not the work
  other_run.warmup_steps = 1;
  other_run.steps = 2;
  other_run.repeat = 1;
  other_run.seed = 1;
  other_run.timeout_s = 1;
  EXPECT_EQ(text(other_run), text(b));
  b.gpus = 1;             // one process has no buckets
  b.tensor_parallel = 1;  // the default says nothing, as for the mode
  b.expert_parallel = 1;
  b.channels_last = false;
  b.tgt_len = b.mem_len = 0;
  b.model = "resnet50";
  b.mode = Mode::kEager;  // the default says nothing: older results keep their identity
  b.seq_len = 0;
  b.objects_per_image = 0;
  b.tuning = Tuning::kFull;
  b.activation_checkpointing = false;
  b.task = Task::kTrain;
  b.prompt_len = b.gen_len = 0;
  b.deterministic = false;
  EXPECT_EQ(text(b), "resnet50 bf16 x1 batch 7");
  b.device = DeviceKind::kCpu;  // threads matter on the CPU only
  EXPECT_EQ(text(b), "resnet50 bf16 x1 batch 7 3 threads");
  b.threads = 1;
  EXPECT_EQ(text(b), "resnet50 bf16 x1 batch 7 1 thread");
}

// The features own their rows (src/features/<feature>/*_settings.def) and the benchmark file
// gathers them after its own, yet the table, and so the options, the identity text and the
// result's block, follows settings/setting_order.h: precision's rows second and third, graph
// mode's among the benchmark's own, the deterministic flag near the end.
TEST(BenchmarkFields, TheTableFollowsTheOneOrderWhereverARowIsDefined) {
  std::vector<std::string> keys;
  for (const BenchmarkField& f : benchmark_fields()) keys.push_back(f.key);
  const std::vector<std::string> order(std::begin(kSettingOrder), std::end(kSettingOrder));
  EXPECT_EQ(keys, order);
  ASSERT_GE(keys.size(), 4u);
  EXPECT_EQ(keys[0], "model");
  EXPECT_EQ(keys[1], "precision");  // a feature's row, ahead of the benchmark's device
  EXPECT_EQ(keys[3], "device");
  const auto place = [&](const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) - keys.begin();
  };
  EXPECT_LT(place("timeout"), place("mode"));                // parallelism's, then graph mode's,
  EXPECT_LT(place("mode"), place("telemetry_interval_ms"));  // then the benchmark's again
  EXPECT_LT(place("kv_cache"), place("weights"));
  EXPECT_LT(place("weight_group"), place("deterministic"));
}

// Every setting sits in one section of the table, every section holds one at least, and a
// section's condition, written once, is where its settings count: LoRA's outside a LoRA run and
// inference's outside infer are no part of the identity.
TEST(BenchmarkFields, EverySettingHasASectionWhoseConditionSaysWhereItCounts) {
  std::set<std::string> names;
  for (const SettingSectionInfo& section : setting_sections()) {
    EXPECT_TRUE(names.insert(section.name).second) << section.name;
    EXPECT_TRUE(std::any_of(benchmark_fields().begin(), benchmark_fields().end(),
                            [&](const BenchmarkField& f) { return f.section == section.section; }))
        << section.name << " holds no setting";
  }
  ResolvedBenchmark b = unusual();
  b.tuning = Tuning::kFull;
  b.task = Task::kTrain;
  const nlohmann::json full = identity_values(b);
  for (const char* key : {"lora_rank", "lora_alpha", "lora_targets", "kv_cache", "prompt_len"}) {
    EXPECT_FALSE(full.contains(key)) << key;
  }
  b.tuning = Tuning::kLora;
  b.task = Task::kInfer;
  const nlohmann::json lora = identity_values(b);
  for (const char* key : {"lora_rank", "lora_alpha", "lora_targets", "kv_cache", "prompt_len"}) {
    EXPECT_TRUE(lora.contains(key)) << key;
  }
  EXPECT_EQ(section_info(find_benchmark_field("lora_rank")->section).name, "lora");
}

// A benchmark is made of ten section structs. Copying one section of a benchmark into a
// default one carries exactly the settings the table places in that section: the struct and
// the table agree on every setting.
template <typename Section>
void expect_section_holds_its_settings(const ResolvedBenchmark& from) {
  ResolvedBenchmark to;
  static_cast<Section&>(to) = static_cast<const Section&>(from);
  const ResolvedBenchmark untouched;
  for (const BenchmarkField& f : benchmark_fields()) {
    const ResolvedBenchmark& expected = f.section == Section::kSection ? from : untouched;
    EXPECT_EQ(f.resolved(to), f.resolved(expected))
        << f.key << " in " << section_info(Section::kSection).name;
  }
}

TEST(BenchmarkFields, EachSectionStructHoldsTheSettingsTheTablePlacesInIt) {
  const ResolvedBenchmark b = unusual();
  expect_section_holds_its_settings<ModelSection<Decided>>(b);
  expect_section_holds_its_settings<MeasurementSection<Decided>>(b);
  expect_section_holds_its_settings<PrecisionSection<Decided>>(b);
  expect_section_holds_its_settings<ParallelismSection<Decided>>(b);
  expect_section_holds_its_settings<SequenceSettings>(b);
  expect_section_holds_its_settings<DetectionSettings>(b);
  expect_section_holds_its_settings<FineTuningSettings>(b);
  expect_section_holds_its_settings<LoraSection<Decided>>(b);
  expect_section_holds_its_settings<InferenceSection<Decided>>(b);
  expect_section_holds_its_settings<MemorySection<Decided>>(b);
  expect_section_holds_its_settings<ObservabilitySection<Decided>>(b);
  EXPECT_EQ(setting_sections().size(), 11u) << "a section without a struct here";
}

}  // namespace
}  // namespace gpubench
