#include "spec/suite_file.h"

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
}

}  // namespace
}  // namespace gpubench
