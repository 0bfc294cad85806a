// The public API from code (include/gpubench/, docs/api.md): a model declared and registered as a
// user's is, one benchmark run in this process with run_in_this_process, written whole with
// write_result and read back as it was.
#include <gtest/gtest.h>

#include "gpubench/benchmark.h"
#include "gpubench/image_classifier.h"
#include "gpubench/results.h"
#include "modeling/model_registry.h"
#include "test_helpers.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

class PublicNetImpl : public torch::nn::Module {
 public:
  explicit PublicNetImpl(int64_t classes)
      : conv_(register_module("conv", layers::Conv2d(torch::nn::Conv2dOptions(3, 4, 3)))),
        fc_(register_module("fc", layers::Linear(4, classes))) {}
  ClassifierOutput forward(torch::Tensor images) {
    torch::Tensor x = torch::adaptive_avg_pool2d(torch::relu(conv_(images)), {1, 1});
    return {fc_(x.flatten(1)), {}};
  }

 private:
  layers::Conv2d conv_;
  layers::Linear fc_;
};
TORCH_MODULE(PublicNet);

// Declared as a user declares a model; registered hidden, as the test models are (a listed model
// has a row in the models reference). GPUBENCH_REGISTER_MODEL itself is run by the installed
// example (Package.InstalledExampleBuildsAndRuns).
ModelInfo public_net_info() {
  ModelInfo info = model_info_of(image_classifier<PublicNet>(
      "test-public-api-net", {}, 8, 2, "a test model declared through the public API",
      [](int64_t classes) { return PublicNet(classes); }));
  info.hidden = true;
  return info;
}

const ModelRegistration kPublicNet{public_net_info()};

// A language model of one's own: token sequences of the run's --seq-len, next-token loss.
class PublicTokenModel : public TrainableModel {
 public:
  explicit PublicTokenModel(int64_t seq_len) : seq_len_(seq_len) {
    net_->register_module("embedding", embedding_);
    net_->register_module("head", head_);
  }
  torch::nn::Module& module() override { return *net_; }
  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device, bool) override {
    const torch::Tensor tokens = torch::randint(kVocab, {batch_size, seq_len_ + 1},
                                                torch::TensorOptions(device).dtype(torch::kLong));
    return {tokens.slice(1, 0, seq_len_), tokens.slice(1, 1), {}};
  }
  torch::Tensor training_loss(const SyntheticBatch& batch) override {
    const torch::Tensor logits = head_(embedding_(batch.inputs));
    return torch::cross_entropy_loss(logits.to(torch::kFloat).flatten(0, 1),
                                     batch.targets.flatten());
  }
  int64_t count_forward() override {
    head_(embedding_(torch::zeros({1, seq_len_}, torch::kLong)));
    return seq_len_;
  }
  int64_t samples_per_item() const override { return seq_len_; }
  int64_t tokens_per_item() const override { return seq_len_; }

  // FP8 takes products whose features and tokens a step are multiples of 16.
  static constexpr int64_t kVocab = 32;
  static constexpr int64_t kWidth = 16;

 private:
  int64_t seq_len_;
  std::shared_ptr<torch::nn::Module> net_ = std::make_shared<torch::nn::Module>();
  torch::nn::Embedding embedding_{kVocab, kWidth};
  layers::Linear head_{kWidth, kVocab};
};

ModelInfo public_token_model_info() {
  ModelDeclaration model;
  model.name = "test-public-api-tokens";
  model.task = "language-modeling";
  model.sample_unit = "tokens";
  model.input = SyntheticInput::kTokenSequences;
  model.default_batch_size = 2;
  model.default_seq_len = 16;
  model.max_seq_len = 64;
  model.reference = "a test model declared through the public API: an embedding and a head";
  model.optimizer = "adamw";
  model.products_in_linear_layers = true;
  model.create = [](const ModelBuild& build) -> std::unique_ptr<TrainableModel> {
    return std::make_unique<PublicTokenModel>(build.seq_len);
  };
  ModelInfo info = model_info_of(model);
  info.hidden = true;
  return info;
}

const ModelRegistration kPublicTokenModel{public_token_model_info()};

const RequestedSettings kTinyRun = {{"model", "test-public-api-net"},
                                    {"device", "cpu"},
                                    {"batch_size", "2"},
                                    {"warmup_steps", "1"},
                                    {"steps", "2"},
                                    {"repeat", "1"},
                                    {"threads", "1"}};

TEST(PublicApi, RunsAModelRegisteredThroughItAndWritesItsResultWhole) {
  const RunResult result = run_in_this_process(kTinyRun);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.model, "test-public-api-net");
  EXPECT_EQ(result.task, "train");
  EXPECT_GT(result.throughput, 0);
  EXPECT_EQ(result.throughput_unit, "images/sec");
  testing::ScratchDirectory dir("public-api");
  write_result(dir.file("r.json"), result);
  const nlohmann::json written_file = testing::read_json(dir.file("r.json"));
  EXPECT_EQ(written_file["status"], "ok");
  EXPECT_EQ(written_file["benchmark"]["model"], "test-public-api-net");
  EXPECT_GT(written_file["metrics"]["forward_flops_per_sample"].get<double>(), 0)
      << "the public layers count their FLOPs";
  const RunResult read_back = read_result(dir.file("r.json"));
  EXPECT_EQ(read_back.json, result.json);
  EXPECT_EQ(read_back.throughput, result.throughput);
  const std::vector<RunResult> in_folder = read_results({dir.path()});
  ASSERT_EQ(in_folder.size(), 1u);
  EXPECT_EQ(in_folder[0].model, "test-public-api-net");
}

TEST(PublicApi, ATokenModelIsBuiltWithTheRunsSequenceLength) {
  RequestedSettings settings = kTinyRun;
  settings["model"] = "test-public-api-tokens";
  settings["seq_len"] = "24";
  const RunResult result = run_in_this_process(settings);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.throughput_unit, "tokens/sec");
  const nlohmann::json document = nlohmann::json::parse(result.json);
  EXPECT_EQ(document["benchmark"]["seq_len"], 24);
  EXPECT_EQ(document["benchmark"]["optimizer"].get<std::string>().rfind("AdamW", 0), 0u)
      << "the optimiser it declares";
  // The head's products, 16 x 32 multiply-adds a token, counted by layers::Linear.
  EXPECT_EQ(document["metrics"]["forward_flops_per_sample"], 2 * 16 * 32);
  settings["seq_len"] = "65";
  EXPECT_THROW(run_in_this_process(settings), UsageError) << "past max_seq_len";
}

// precision fp8 rewrites the products of a model that declares them in layers::Linear, and
// refuses one that does not (a convnet's are convolutions).
TEST(PublicApi, Fp8GoesByWhereTheDeclarationSaysTheProductsRun) {
  const auto fp8_outcome = [](const std::string& model) {
    RequestedSettings settings = kTinyRun;
    settings["model"] = model;
    settings["precision"] = "fp8";
    try {
      const RunResult result = run_in_this_process(settings);
      return result.ok() ? result.status : result.status + ": " + result.error;
    } catch (const UsageError& error) {
      return "refused: " + std::string(error.what());
    }
  };
  if (!compat::kHasFp8) {  // LibTorch 1.13: the build's refusal comes first, for either model
    EXPECT_EQ(fp8_outcome("test-public-api-net"), fp8_outcome("test-public-api-tokens"));
    EXPECT_EQ(fp8_outcome("test-public-api-net").rfind("refused: ", 0), 0u);
    return;
  }
  EXPECT_NE(fp8_outcome("test-public-api-net").find("declares no FP8-eligible layers"),
            std::string::npos);
  const std::string tokens = fp8_outcome("test-public-api-tokens");
  EXPECT_EQ(tokens.find("FP8-eligible"), std::string::npos) << tokens;
  EXPECT_TRUE(tokens == "ok" || tokens.rfind("refused: ", 0) == 0)
      << "it runs in FP8, or this build or machine lacks FP8: " << tokens;
}

TEST(PublicApi, RefusesWithOneLineNamingTheBadSetting) {
  const auto refusal = [](RequestedSettings settings) {
    try {
      run_in_this_process(settings);
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("(ran)");
  };
  RequestedSettings ranks = kTinyRun;
  ranks["gpus"] = "2";
  EXPECT_NE(refusal(ranks).find("run_in_this_process runs one process, not 2 ranks"),
            std::string::npos)
      << refusal(ranks);
  RequestedSettings search = kTinyRun;
  search["batch_size"] = "max";
  EXPECT_NE(refusal(search).find("batch_size max searches with probes in child processes"),
            std::string::npos)
      << refusal(search);
  RequestedSettings unknown = kTinyRun;
  unknown["batch"] = "2";
  EXPECT_NE(refusal(unknown).find("unknown setting 'batch'"), std::string::npos)
      << refusal(unknown);
  RequestedSettings bad_value = kTinyRun;
  bad_value["precision"] = "fp12";
  EXPECT_NE(refusal(bad_value).find("fp12"), std::string::npos) << refusal(bad_value);
}

TEST(PublicApi, WriteResultRefusesWhatIsNotAResult) {
  testing::ScratchDirectory dir("public-api-refuse");
  RunResult not_a_result;
  not_a_result.json = "{\"schema\": \"something/1\"}";
  EXPECT_THROW(write_result(dir.file("r.json"), not_a_result), UsageError);
  not_a_result.json = "not json";
  EXPECT_THROW(write_result(dir.file("r.json"), not_a_result), UsageError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
}

TEST(PublicApi, RegisterModelRefusesADeclarationWithoutANameOrATakenName) {
  ModelDeclaration nameless;
  nameless.create = [](const ModelBuild&) -> std::unique_ptr<TrainableModel> { return nullptr; };
  EXPECT_FALSE(register_model(nameless));
  ModelDeclaration taken = nameless;
  taken.name = "resnet50";
  EXPECT_FALSE(register_model(taken));
  ModelDeclaration without_create;
  without_create.name = "test-public-api-no-create";
  EXPECT_FALSE(register_model(without_create));
  ModelDeclaration segments = nameless;
  segments.name = "test-public-api-segments";
  segments.input = SyntheticInput::kTokenSegments;
  EXPECT_FALSE(register_model(segments));
  EXPECT_EQ(ModelRegistry::instance().find("test-public-api-segments"), nullptr);
}

}  // namespace
}  // namespace gpubench
