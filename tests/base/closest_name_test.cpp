// "Did you mean": the known name nearest a mistyped one.
#include "common/closest_name.h"

#include <gtest/gtest.h>

namespace gpubench {
namespace {

const std::vector<std::string> kModels = {"resnet50",     "resnet101", "llama-3-8b",
                                          "llama-3.1-8b", "vgg16",     "googlenet"};
const std::vector<std::string> kOptions = {"--batch-size", "--model", "--mode", "--gen-len",
                                           "--format"};

TEST(ClosestName, SeparatorsAndCaseAreNoDifference) {
  EXPECT_EQ(closest_name("resnet-50", kModels), "resnet50");
  EXPECT_EQ(closest_name("ResNet50", kModels), "resnet50");
  EXPECT_EQ(closest_name("llama3-8b", kModels), "llama-3-8b");
  EXPECT_EQ(closest_name("llama_3.1_8b", kModels), "llama-3.1-8b");
}

TEST(ClosestName, TheOneNameThatBeginsWithItThenTheFewestEdits) {
  EXPECT_EQ(closest_name("--batch", kOptions), "--batch-size");
  EXPECT_EQ(closest_name("--gen", kOptions), "--gen-len");
  EXPECT_EQ(closest_name("--fromat", kOptions), "--format") << "an adjacent swap is one edit";
  EXPECT_EQ(closest_name("googlnet", kModels), "googlenet");
  EXPECT_EQ(closest_name("vgg19", kModels), "vgg16");
}

TEST(ClosestName, NothingNearOrTwoAsNearIsNoAnswer) {
  EXPECT_EQ(closest_name("bert", kModels), std::nullopt);
  EXPECT_EQ(closest_name("--mod", kOptions), "--mode")
      << "--model and --mode begin with it: the fewest edits decide";
  EXPECT_EQ(closest_name("--modle", kOptions), std::nullopt) << "one edit from each";
  EXPECT_EQ(closest_name("--x", kOptions), std::nullopt);
  EXPECT_EQ(did_you_mean("resnet-50", kModels), " did you mean 'resnet50'?");
  EXPECT_EQ(did_you_mean("bert", kModels), "");
}

}  // namespace
}  // namespace gpubench
