#include "settings/suite_file.h"

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "common/errors.h"

namespace gpubench {
namespace {

std::string error_of(const std::string& text, bool is_json) {
  try {
    parse_suite(text, "suite.yaml", is_json);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(SuiteFile, ListValuesExpandToTheCrossProduct) {
  const auto entries = parse_suite(R"(
defaults:
  device: cpu
  steps: 5
benchmarks:
  - model: resnet50
    precision: [fp32, bf16]
    batch-size: [2, 4]
  - model: resnet101
    steps: 7
)",
                                   "suite.yaml", false);
  std::vector<BenchmarkRequest> specs;
  for (const SuiteEntry& entry : entries) specs.push_back(entry.request);
  ASSERT_EQ(specs.size(), 5u);
  EXPECT_EQ(specs[0].precision, Precision::kFp32);
  EXPECT_EQ(specs[0].batch_size, 2);
  EXPECT_EQ(specs[1].precision, Precision::kFp32);
  EXPECT_EQ(specs[1].batch_size, 4);
  EXPECT_EQ(specs[2].precision, Precision::kBf16);
  EXPECT_EQ(specs[3].batch_size, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(specs[i].model, "resnet50");
    EXPECT_EQ(specs[i].device, DeviceKind::kCpu);
    EXPECT_EQ(specs[i].steps, 5);
  }
  EXPECT_EQ(specs[4].model, "resnet101");
  EXPECT_EQ(specs[4].steps, 7);                  // the entry overrides the defaults
  EXPECT_EQ(specs[4].batch_size, std::nullopt);  // the model decides, when resolved
  EXPECT_EQ(entries[4].origin, "suite.yaml:9");
}

TEST(SuiteFile, JsonAndYamlGiveTheSameBenchmarks) {
  const auto yaml = parse_suite(
      "defaults: {device: cpu, channels_last: true}\nbenchmarks:\n  - {model: resnet50, gpus: 1, "
      "warmup_steps: 0, repeat: 2, seed: 7, threads: 1}\n",
      "a.yaml", false);
  const auto json = parse_suite(
      R"({"defaults": {"device": "cpu", "channels-last": true},
          "benchmarks": [{"model": "resnet50", "gpus": 1, "warmup-steps": 0, "repeat": 2,
                          "seed": 7, "threads": 1}]})",
      "a.json", true);
  ASSERT_EQ(yaml.size(), 1u);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_TRUE(yaml[0].request == json[0].request);
  EXPECT_EQ(yaml[0].request.channels_last, std::optional<bool>(true));
  EXPECT_EQ(yaml[0].request.warmup_steps, 0);
  EXPECT_EQ(yaml[0].request.seed, 7);
}

TEST(SuiteFile, UnknownKeyIsAnErrorNamingKeyFileAndLine) {
  const std::string error = error_of("benchmarks:\n  - model: resnet50\n    batchsize: 4\n", false);
  EXPECT_NE(error.find("suite.yaml:3"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown key 'batchsize'"), std::string::npos) << error;
}

// yaml-cpp's Load keeps the first document: a second one's benchmarks were dropped silently.
TEST(SuiteFile, ASecondYamlDocumentIsRefusedNotDropped) {
  const std::string error =
      error_of("benchmarks:\n  - model: resnet50\n---\nbenchmarks:\n  - model: vgg16\n", false);
  EXPECT_NE(error.find("suite.yaml:3"), std::string::npos) << error;  // where the --- is
  EXPECT_NE(error.find("one YAML document"), std::string::npos) << error;
  // A file of empty documents is refused at its third, without building a node for each.
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "---\n";
  EXPECT_NE(error_of("benchmarks:\n  - model: resnet50\n" + many, false).find("one YAML document"),
            std::string::npos);
  EXPECT_EQ(error_of("---\nbenchmarks:\n  - model: resnet50\n", false), "");
  EXPECT_EQ(error_of("benchmarks:\n  - model: resnet50\n---\n", false), "");
}

TEST(SuiteFile, MalformedYamlGivesTheLine) {
  const std::string error = error_of("benchmarks:\n  - model: [resnet50\n  - steps: 3\n", false);
  EXPECT_NE(error.find("malformed YAML"), std::string::npos) << error;
  EXPECT_NE(error.find("suite.yaml:"), std::string::npos) << error;
}

TEST(SuiteFile, MalformedJsonGivesTheLine) {
  const std::string error =
      error_of("{\n\"benchmarks\": [\n  {\"model\": \"resnet50\",}\n]}", true);
  EXPECT_NE(error.find("suite.yaml:3"), std::string::npos) << error;
  EXPECT_NE(error.find("malformed JSON"), std::string::npos) << error;
}

TEST(SuiteFile, BadValuesAreErrors) {
  // The model is checked when the suite is resolved (it needs the registry): see cli_test.
  EXPECT_EQ(error_of("benchmarks:\n  - precision: fp4\n", false),
            "suite.yaml:2: precision must be one of fp32, tf32, fp16, bf16, fp8, got 'fp4'");
  EXPECT_EQ(error_of("benchmarks:\n  - steps: many\n", false),
            "suite.yaml:2: steps must be an integer from 1 to 10000000, got \"many\"");
  EXPECT_EQ(error_of("benchmarks:\n  - steps: 0\n", false),
            "suite.yaml:2: steps must be an integer from 1 to 10000000, got 0");
  EXPECT_EQ(error_of("benchmarks:\n  - batch_size: 0\n", false),
            "suite.yaml:2: batch_size must be an integer from 1 to 1048576, or max, got 0");
  EXPECT_EQ(error_of("benchmarks:\n  - timeout: 0\n", false),
            "suite.yaml:2: timeout must be an integer from 1 to 604800, got 0");
  // A value tagged !!str is a string, as a quoted one is: both refused where a number is wanted.
  EXPECT_EQ(error_of("benchmarks:\n  - steps: !!str 1\n", false),
            "suite.yaml:2: steps must be an integer from 1 to 10000000, got \"1\"");
  EXPECT_EQ(error_of("benchmarks:\n  - steps: \"2\"\n", false),
            "suite.yaml:2: steps must be an integer from 1 to 10000000, got \"2\"");
  EXPECT_EQ(error_of("benchmarks:\n  - model: !!str resnet50\n    steps: !!int 2\n", false), "");
  EXPECT_NE(
      error_of("benchmarks:\n  - steps: !custom 2\n", false).find("tag '!custom' is not taken"),
      std::string::npos);
  EXPECT_NE(error_of("benchmarks:\n  - precision: []\n", false).find("empty list"),
            std::string::npos);
  EXPECT_NE(error_of("defaults: {steps: 2}\n", false).find("no benchmarks"), std::string::npos);
  EXPECT_NE(error_of("benchmark:\n  - model: resnet50\n", false).find("unknown top-level key"),
            std::string::npos);
}

TEST(SuiteFile, MissingFileIsAnError) {
  EXPECT_THROW(load_suite_file("/nonexistent/suite.yaml"), UsageError);
}

TEST(SuiteFile, ShippedSuitesParse) {
  for (const char* name :
       {"quick.yaml", "resnet50.yaml", "convnets.yaml", "cpu-smoke.yaml", "nightly.yaml",
        "transformerxl.yaml", "transformerxl-cpu.yaml", "scaling.yaml", "cpu-ranks.yaml"}) {
    const auto entries = load_suite_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/" + name);
    EXPECT_FALSE(entries.empty()) << name;
  }
  EXPECT_EQ(load_suite_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/resnet50.yaml").size(),
            4u);
  const auto scaling = load_suite_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/scaling.yaml");
  ASSERT_EQ(scaling.size(), 12u);  // four models x 1, 4, 8 GPUs
  std::set<std::string> smoke;
  for (const auto& entry :
       load_suite_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/cpu-smoke.yaml")) {
    smoke.insert(*entry.request.model);
  }
  EXPECT_EQ(smoke, (std::set<std::string>{"resnet50", "resnet101", "resnet152", "inception3",
                                          "inception4", "vgg16", "googlenet"}));
  EXPECT_EQ(scaling[0].request.gpus, 1);
  EXPECT_EQ(scaling[2].request.gpus, 8);
  // The GPU check's tiers, as they run and as their rehearsal runs them.
  int tiers = 0;
  for (const auto& file : std::filesystem::directory_iterator(std::string(GPUBENCH_SOURCE_DIR) +
                                                              "/configs/gpu-check")) {
    ++tiers;
    for (const bool rehearse : {false, true}) {
      const auto entries = load_suite_file(file.path().string(), kDefaultMaxBenchmarks, rehearse);
      EXPECT_FALSE(entries.empty()) << file.path();
      for (const auto& entry : entries) {
        EXPECT_EQ(entry.request.device, rehearse ? DeviceKind::kCpu : DeviceKind::kCuda)
            << entry.origin;
      }
    }
  }
  EXPECT_GE(tiers, 2);  // smoke and compare at least
}

const char* kRehearsedSuite = R"(
defaults: {device: cuda, steps: 20}
benchmarks:
  - {model: resnet50, precision: fp16, batch_size: [256, 32]}
  - {model: bert-large, precision: bf16, batch_size: 32, memory_limit: 8G}
rehearsal:
  set: {device: cpu, threads: 2}
  replace:
    model: {resnet50: test-tiny-cnn, bert-large: test-tiny-bert}
    precision: {fp16: bf16}
    batch-size: {256: 2, 32: 4}
    memory_limit: {8G: 4M}
    steps: {20: 1}
)";

// --rehearsal: `replace` maps the values it names (in a list, element by element) and `set`
// overrides every entry; values it does not name stay.
TEST(SuiteFile, ARehearsalReplacesTheValuesItMapsAndSetsItsOwn) {
  const auto real = parse_suite(kRehearsedSuite, "suite.yaml", false);
  ASSERT_EQ(real.size(), 3u);
  EXPECT_EQ(real[0].request.model, "resnet50");
  EXPECT_EQ(real[0].request.device, DeviceKind::kCuda);
  const auto rehearsed = parse_suite(kRehearsedSuite, "suite.yaml", false, 1000, true);
  ASSERT_EQ(rehearsed.size(), 3u);
  EXPECT_EQ(rehearsed[0].request.model, "test-tiny-cnn");
  EXPECT_EQ(rehearsed[0].request.precision, Precision::kBf16);
  EXPECT_EQ(rehearsed[0].request.batch_size, 2);
  EXPECT_EQ(rehearsed[1].request.batch_size, 4);
  EXPECT_EQ(rehearsed[2].request.model, "test-tiny-bert");
  EXPECT_EQ(rehearsed[2].request.precision, Precision::kBf16);  // not mapped: kept
  EXPECT_EQ(rehearsed[2].request.memory_limit, int64_t{4} << 20);
  for (const SuiteEntry& entry : rehearsed) {
    EXPECT_EQ(entry.request.device, DeviceKind::kCpu);
    EXPECT_EQ(entry.request.threads, 2);
    EXPECT_EQ(entry.request.steps, 1);
  }
}

// run --set KEY=VALUE: a setting over every entry, after the file's own and its rehearsal's, read
// as a plain value in the file is (a [list] expands).
TEST(SuiteFile, SetOverridesEveryEntryAfterTheFileAndItsRehearsal) {
  const auto set = parse_suite(kRehearsedSuite, "suite.yaml", false, 1000, false,
                               {"device=cpu", "batch_size=[1, 4]", "steps=3"});
  ASSERT_EQ(set.size(), 4u) << "two entries, each at batches 1 and 4";
  for (const SuiteEntry& entry : set) {
    EXPECT_EQ(entry.request.device, DeviceKind::kCpu);
    EXPECT_EQ(entry.request.steps, 3);
  }
  EXPECT_EQ(set[0].request.batch_size, 1);
  EXPECT_EQ(set[1].request.batch_size, 4);
  EXPECT_EQ(set[3].request.model, "bert-large");
  const auto rehearsed = parse_suite(kRehearsedSuite, "suite.yaml", false, 1000, true,
                                     {"threads=1", "memory_limit=8M"});
  EXPECT_EQ(rehearsed[0].request.model, "test-tiny-cnn");
  EXPECT_EQ(rehearsed[0].request.threads, 1) << "over the rehearsal's own set";
  EXPECT_EQ(rehearsed[2].request.memory_limit, int64_t{8} << 20);
}

TEST(SuiteFile, ABadSetIsRefusedNamingIt) {
  const std::string plain = "benchmarks:\n  - {model: resnet50}\n";
  const auto refusal = [&](const std::string& assignment) {
    try {
      parse_suite(plain, "suite.yaml", false, 1000, false, {assignment});
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal("devise=cpu").find("--set 'devise=cpu': unknown key 'devise'; known: "),
            std::string::npos)
      << refusal("devise=cpu");
  EXPECT_NE(refusal("device").find("--set 'device': give KEY=VALUE"), std::string::npos);
  EXPECT_NE(refusal("=cpu").find("give KEY=VALUE"), std::string::npos);
  EXPECT_NE(refusal("batch_size=0").find("--set 'batch_size=0': "), std::string::npos)
      << refusal("batch_size=0");
  EXPECT_NE(refusal("device=tpu").find("--set 'device=tpu': "), std::string::npos)
      << refusal("device=tpu");
  EXPECT_NE(refusal("steps={a: 1}").find("a benchmark field must be a value or a list"),
            std::string::npos)
      << refusal("steps={a: 1}");
  try {
    parse_suite(plain, "suite.yaml", false, 1000, false, {"steps=1", "steps=2"});
    ADD_FAILURE() << "a setting set twice";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--set 'steps=2': 'steps' is set twice"),
              std::string::npos)
        << error.what();
  }
}

TEST(SuiteFile, ARehearsalIsRefusedWhereTheSuiteHasNoneOrItsKeysAreUnknown) {
  const std::string plain = "benchmarks:\n  - {model: resnet50}\n";
  try {
    parse_suite(plain, "suite.yaml", false, 1000, true);
    FAIL() << "a suite without a rehearsal section was rehearsed";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("needs a 'rehearsal' section"), std::string::npos)
        << error.what();
  }
  EXPECT_NE(error_of(plain + "rehearsal: {sett: {device: cpu}}\n", false)
                .find("unknown key 'rehearsal.sett'; allowed: set, replace"),
            std::string::npos);
  EXPECT_NE(error_of(plain + "rehearsal: [cpu]\n", false).find("'rehearsal' must be a mapping"),
            std::string::npos);
  // A typo there fails the real run too, not only the rehearsal.
  EXPECT_NE(error_of(plain + "rehearsal: {replace: {modle: {resnet50: test-tiny-cnn}}}\n", false)
                .find("unknown key 'rehearsal.replace.modle'"),
            std::string::npos);
  EXPECT_NE(
      error_of(plain + "rehearsal: {set: {devise: cpu}}\n", false).find("unknown key 'devise'"),
      std::string::npos);
  // JSON takes the same section.
  const auto entries = parse_suite(
      R"({"benchmarks": [{"model": "resnet50", "batch_size": 256}],
          "rehearsal": {"set": {"device": "cpu"}, "replace": {"batch_size": {"256": 2}}}})",
      "suite.json", true, 1000, true);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].request.batch_size, 2);
  EXPECT_EQ(entries[0].request.device, DeviceKind::kCpu);
}

}  // namespace
}  // namespace gpubench
