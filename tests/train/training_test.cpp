#include "train/training_step.h"

#include <gtest/gtest.h>

#include "memory/tensor_memory.h"
#include "torch_support/captured_graph.h"
#include "torch_support/device_timers.h"
#include "train/graphed_step.h"

namespace gpubench {
namespace {

// Steps on one fixed batch must lower the loss: a loop that does not learn is not benchmarking
// training. Small images keep it quick; ResNet pools adaptively, and at 16 x 16 its last two
// stages see one pixel, normalised over the batch of 4: fp32 learns there, but in bf16 the
// backward of layer4's strided 3 x 3 convolution over that one pixel gave NaN gradients from the
// second step (oneDNN's bf16 kernels: on an Intel Xeon with AMX the loss turned NaN, with
// oneDNN held to AVX-512 the gradients held NaN too, in LibTorch 1.13 and 2.11 and in Python's
// torch alike). So bf16 trains at 32 x 32, where no NaN arises, for two steps (the second's loss
// 2.6 where the first's is 7.9): on a CPU without AVX-512 BF16 each bf16 step takes seconds
// (LibTorch's reference kernels), where fp32's take 0.2 s.
std::vector<float> losses_over_steps(Precision precision, int steps, int64_t side) {
  torch::manual_seed(0);
  auto model = ModelRegistry::instance().get("resnet50").instantiate();
  model->module().train();
  SyntheticBatch batch{
      torch::randn({4, 3, side, side}), torch::randint(1000, {4}, torch::kLong), {}};
  OptimizerSettings settings;
  settings.learning_rate = 0.01;
  TrainingStep step(*model, PrecisionPolicy(precision, torch::kCPU), settings);
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(step.run(batch).item<float>());
  return losses;
}

TEST(TrainingStep, TenStepsOnAFixedBatchLowerTheLossInFp32) {
  const auto losses = losses_over_steps(Precision::kFp32, 10, 16);
  EXPECT_LT(losses.back(), 0.5f * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST(TrainingStep, TwoStepsOnAFixedBatchLowerTheLossInBf16) {
  const auto losses = losses_over_steps(Precision::kBf16, 2, 32);
  EXPECT_LT(losses.back(), 0.5f * losses.front()) << losses.front() << " -> " << losses.back();
}

// Graph mode measures its step's memory in the last eager warm-up, before the graph's private
// pool exists; an eager step after the replays, as before, would run beside that pool and could
// double the footprint. Rehearsed on the CPU: the calls a capture makes, without a device graph.
TEST(GraphedStep, MeasuresTheStepsMemoryInTheLastWarmUpBeforeTheCapture) {
  tensor_memory::track_cpu_tensors();
  torch::manual_seed(0);
  auto model = ModelRegistry::instance().get("test-tiny-cnn").instantiate();
  model->module().train();
  const SyntheticBatch batch = model->synthetic_batch(2, torch::kCPU, false);
  TrainingStep step(*model, PrecisionPolicy(Precision::kFp32, torch::kCPU), OptimizerSettings{});
  ASSERT_EQ(step.last_step_memory().peak, 0);
  GraphedStep graphed(step, batch, torch::kCPU, kGraphCaptureWarmupSteps, /*rehearsal=*/true);
  const StepMemory measured = step.last_step_memory();
  EXPECT_GT(measured.peak, 0) << "no step measured before the capture";
  EXPECT_GT(measured.activations(), 0);
  graphed.run();
  EXPECT_EQ(step.last_step_memory().peak, measured.peak) << "replays measure nothing more";
}

// A step that throws inside the capture (an out-of-memory, a failed check) leaves no capture
// open: the rehearsal runs the work through the scope the CUDA capture uses, which ends the
// capture on every path out, as torch.cuda.graph's context does.
TEST(GraphedStep, AStepThatThrowsInsideTheCaptureLeavesNoCaptureOpen) {
  int calls = 0;
  const auto throws_when_captured = [&calls] {
    if (++calls == 3) throw std::runtime_error("out of memory inside the capture");
  };
  EXPECT_THROW(CapturedGraph::rehearsal(throws_when_captured, 2), std::runtime_error);
  EXPECT_EQ(calls, 3) << "two warm-ups, then the capture's call";
  EXPECT_EQ(CapturedGraph::captures_open(), 0);
  const auto graph = CapturedGraph::rehearsal([&calls] { ++calls; }, 2);
  EXPECT_EQ(CapturedGraph::captures_open(), 0);
}

TEST(StepTimer, HostTimerGivesOneTimePerStepWithinTheWindow) {
  auto timer = make_step_timer(torch::kCPU);
  timer->start_window();
  for (int i = 0; i < 3; ++i) {
    torch::mm(torch::randn({64, 64}), torch::randn({64, 64}));
    timer->mark_step();
  }
  const WindowTiming timing = timer->stop_window();
  ASSERT_EQ(timing.step_times_ms.size(), 3u);
  double sum = 0;
  for (double ms : timing.step_times_ms) {
    EXPECT_GT(ms, 0);
    sum += ms;
  }
  EXPECT_LE(sum / 1000.0, timing.seconds + 1e-9);
}

}  // namespace
}  // namespace gpubench
