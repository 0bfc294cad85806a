#include "features/tuning/activation_checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

#include "modeling/linear_products.h"
#include "torch_support/compat.h"

namespace gpubench::tuning {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The default generator of the block's device (and the CPU's, which CPU dropout draws from).
std::vector<at::Generator> generators_for(const Tensor& hidden) {
  std::vector<at::Generator> generators{at::detail::getDefaultCPUGenerator()};
#if GPUBENCH_WITH_CUDA
  if (hidden.is_cuda()) {
    generators.push_back(at::cuda::detail::getDefaultCUDAGenerator(hidden.device().index()));
  }
#else
  (void)hidden;
#endif
  return generators;
}

std::vector<Tensor> states_of(std::vector<at::Generator>& generators) {
  std::vector<Tensor> states;
  for (at::Generator& generator : generators) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    states.push_back(generator.get_state());
  }
  return states;
}

void restore(std::vector<at::Generator>& generators, const std::vector<Tensor>& states) {
  for (size_t i = 0; i < generators.size(); ++i) {
    std::lock_guard<std::mutex> lock(generators[i].mutex());
    generators[i].set_state(states[i]);
  }
}

// Autocast as the forward saw it, re-entered for the recomputation (backward may run on another
// thread, whose autocast state is its own); FP8's scope likewise.
class AutocastAsRecorded {
 public:
  AutocastAsRecorded(c10::DeviceType device, bool enabled, at::ScalarType dtype)
      : device_(device),
        previous_enabled_(compat::autocast_enabled(device)),
        previous_dtype_(compat::autocast_dtype(device)) {
    compat::set_autocast_dtype(device, dtype);
    compat::set_autocast_enabled(device, enabled);
    at::autocast::increment_nesting();
  }
  ~AutocastAsRecorded() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    compat::set_autocast_enabled(device_, previous_enabled_);
    compat::set_autocast_dtype(device_, previous_dtype_);
  }
  AutocastAsRecorded(const AutocastAsRecorded&) = delete;
  AutocastAsRecorded& operator=(const AutocastAsRecorded&) = delete;

 private:
  c10::DeviceType device_;
  bool previous_enabled_;
  at::ScalarType previous_dtype_;
};

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  // `block` travels as an address: the context holds IValues only, and the block outlives the
  // backward pass (it is a module of the model being trained).
  static variable_list forward(AutogradContext* ctx, const Tensor& hidden, int64_t block,
                               at::TensorList extras) {
    const c10::DeviceType device = hidden.device().type();
    std::vector<at::Generator> generators = generators_for(hidden);
    ctx->saved_data["block"] = block;
    ctx->saved_data["extras"] = extras.vec();
    ctx->saved_data["rng"] = states_of(generators);
    ctx->saved_data["autocast"] = compat::autocast_enabled(device);
    ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(compat::autocast_dtype(device));
    // The product rule (precision fp8's) the block runs under, to run under again in backward.
    ctx->saved_data["products"] = reinterpret_cast<int64_t>(layers::LinearProducts::active());
    ctx->save_for_backward({hidden});
    torch::NoGradGuard no_grad;
    return {reinterpret_cast<CheckpointableBlock*>(block)->run_block(hidden, extras.vec())};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const Tensor saved = ctx->get_saved_variables()[0];
    auto* block = reinterpret_cast<CheckpointableBlock*>(ctx->saved_data["block"].toInt());
    const std::vector<Tensor> extras = ctx->saved_data["extras"].toTensorVector();
    const Tensor hidden = saved.detach().requires_grad_(saved.requires_grad());
    std::vector<at::Generator> generators = generators_for(hidden);
    const std::vector<Tensor> now = states_of(generators);
    restore(generators, ctx->saved_data["rng"].toTensorVector());
    Tensor output;
    {
      torch::AutoGradMode grad_on(true);
      AutocastAsRecorded autocast(
          hidden.device().type(), ctx->saved_data["autocast"].toBool(),
          static_cast<at::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()));
      layers::LinearProductsScope products(
          reinterpret_cast<const layers::LinearProducts*>(ctx->saved_data["products"].toInt()));
      output = block->run_block(hidden, extras);
    }
    restore(generators, now);
    torch::autograd::backward({output}, {grad_outputs[0]});
    variable_list grads{hidden.requires_grad() ? hidden.grad() : Tensor(), Tensor()};
    grads.resize(2 + extras.size());
    return grads;
  }
};

class ReentrantCheckpoint : public BlockRecomputation {
 public:
  Tensor run(CheckpointableBlock& block, const Tensor& hidden,
             const std::vector<Tensor>& extras) const override {
    return checkpointed(block, hidden, extras);
  }
};

}  // namespace

Tensor checkpointed(CheckpointableBlock& block, const Tensor& hidden,
                    const std::vector<Tensor>& extras) {
  if (!torch::GradMode::is_enabled()) return block.run_block(hidden, extras);
  const Tensor input = hidden.requires_grad() ? hidden : hidden.detach().requires_grad_(true);
  return CheckpointFunction::apply(input, reinterpret_cast<int64_t>(&block),
                                   at::TensorList(extras))[0];
}

int checkpoint_blocks(torch::nn::Module& module) {
  static const ReentrantCheckpoint recomputation;
  int blocks = 0;
  for (const auto& child : module.modules(/*include_self=*/false)) {
    if (auto* block = dynamic_cast<CheckpointableBlock*>(child.get())) {
      block->set_recomputation(&recomputation);
      ++blocks;
    }
  }
  return blocks;
}

}  // namespace gpubench::tuning
