// From request to resolved benchmark: each default from its owner (the table, the model's
// registration, the precision policy, the machine).
#include "train/resolve_benchmark.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "train/compat.h"

namespace gpubench {
namespace {

MachineFacts gpu_machine(int devices = 2) {
  MachineFacts machine;
  machine.cuda_available = true;
  machine.cuda_device_count = devices;
  machine.cpu_cores = 8;
  return machine;
}

MachineFacts cpu_machine() {
  MachineFacts machine;
  machine.cpu_cores = 8;
  return machine;
}

std::string error_of(const BenchmarkRequest& request, const MachineFacts& machine) {
  try {
    resolve(request, machine);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(Resolve, TheModelGivesTheBatchAndThePolicyAndModelTogetherGiveChannelsLast) {
  BenchmarkRequest request;
  request.precision = Precision::kFp16;
  const ResolvedBenchmark on_gpu = resolve(request, gpu_machine());
  EXPECT_EQ(on_gpu.model, "resnet50");
  EXPECT_EQ(on_gpu.device, DeviceKind::kCuda);
  EXPECT_EQ(on_gpu.batch_size, 64);   // resnet50's registration
  EXPECT_TRUE(on_gpu.channels_last);  // a convnet, under mixed precision on CUDA
  EXPECT_EQ(on_gpu.tgt_len, 0);
  EXPECT_EQ(on_gpu.threads, 8);
  request.precision = Precision::kFp32;
  EXPECT_FALSE(resolve(request, gpu_machine()).channels_last);
  request.precision = Precision::kBf16;
  request.model = "transformerxl-base";  // not a convnet
  request.warmup_steps = 3;
  EXPECT_FALSE(resolve(request, gpu_machine()).channels_last);
  request.model = "resnet50";
  request.channels_last = false;  // what the user says wins
  EXPECT_FALSE(resolve(request, gpu_machine()).channels_last);
}

TEST(Resolve, AnAliasBecomesTheModelsName) {
  BenchmarkRequest request;
  request.model = "inception_v3";
  EXPECT_EQ(resolve(request, cpu_machine()).model, "inception3");
}

TEST(Resolve, CpuRanksShareTheCoresAndTheCpuRunsOnlyFp32AndBf16) {
  BenchmarkRequest request;
  request.gpus = 4;
  const ResolvedBenchmark ranks = resolve(request, cpu_machine());
  EXPECT_EQ(ranks.device, DeviceKind::kCpu);
  EXPECT_EQ(ranks.threads, 2);
  request.precision = Precision::kFp16;
  EXPECT_EQ(error_of(request, cpu_machine()),
            "precision 'fp16' needs a CUDA device; on the CPU use fp32 or bf16");
  request.precision = Precision::kTf32;
  EXPECT_NE(error_of(request, cpu_machine()).find("needs a CUDA device"), std::string::npos);
}

TEST(Resolve, TransformerXLOwnsItsWarmupRuleAndImagesTakeNoSequenceLengths) {
  BenchmarkRequest request;
  request.model = "transformerxl-base";
  request.device = DeviceKind::kCpu;
  request.warmup_steps = 2;
  EXPECT_EQ(error_of(request, cpu_machine()),
            "warmup_steps 2 are too few for transformerxl-base: it needs at least 3");
  request.warmup_steps = 3;
  const ResolvedBenchmark resolved = resolve(request, cpu_machine());
  EXPECT_EQ(resolved.tgt_len, 192);
  EXPECT_EQ(resolved.mem_len, 192);
  request.tgt_len = 64;  // memory of three segments: 192 / 64 + 2 = 5 warm-up steps
  EXPECT_NE(error_of(request, cpu_machine()).find("at least 5"), std::string::npos);
  BenchmarkRequest image;
  image.model = "resnet50";
  image.tgt_len = 16;
  EXPECT_EQ(error_of(image, cpu_machine()),
            "tgt_len and mem_len apply to language models only, not to 'resnet50'");
}

TEST(Resolve, DevicesThisMachineLacksAreUsageErrors) {
  BenchmarkRequest request;
  request.device = DeviceKind::kCuda;
  EXPECT_NE(error_of(request, cpu_machine()).find("no CUDA device is available"),
            std::string::npos);
  request.gpus = 4;
  EXPECT_EQ(error_of(request, gpu_machine(2)),
            "--gpus 4 on this machine but only 2 CUDA device(s) present");
  MachineFacts one_per_task = gpu_machine(1);  // srun binding one GPU to each task
  one_per_task.local_ranks = 4;
  EXPECT_EQ(resolve(request, one_per_task).device, DeviceKind::kCuda);
  request.model = "resnet5";
  EXPECT_NE(error_of(request, gpu_machine(8)).find("unknown model 'resnet5'"), std::string::npos);
}

TEST(Resolve, GraphModeNeedsCudaAndSaysWhatItCannotCapture) {
  BenchmarkRequest request;
  request.mode = Mode::kGraph;
  EXPECT_EQ(error_of(request, cpu_machine()), "graph mode needs a CUDA device");
  request.gpus = 2;
  const std::string several = error_of(request, gpu_machine(2));
  if (compat::kHasFusedSgd) {
    EXPECT_NE(several.find("graph mode runs one rank"), std::string::npos) << several;
    request.gpus = 1;
    EXPECT_EQ(resolve(request, gpu_machine(2)).mode, Mode::kGraph);
  } else {  // Debian's LibTorch 1.13: no fused SGD, so no graph mode at all
    EXPECT_NE(several.find("graph mode needs LibTorch 2.4 or newer"), std::string::npos) << several;
  }
}

TEST(Resolve, ABenchmarkFromElsewhereIsCheckedNotResolvedAgain) {
  BenchmarkRequest request;
  request.gpus = 2;
  ResolvedBenchmark resolved = resolve(request, gpu_machine(2));
  EXPECT_NO_THROW(check_runnable_here(resolved, gpu_machine(2)));
  EXPECT_THROW(check_runnable_here(resolved, gpu_machine(1)), UsageError);
  resolved.model = "nonexistent";
  EXPECT_THROW(check_runnable_here(resolved, gpu_machine(2)), UsageError);
}

}  // namespace
}  // namespace gpubench
