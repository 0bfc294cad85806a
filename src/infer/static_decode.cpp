#include "infer/static_decode.h"

namespace gpubench {
namespace {
constexpr int kWarmupSteps = 3;  // before capture
}  // namespace

StaticDecode::StaticDecode(TextGenerator& model, KvCache& cache, int64_t batch,
                           torch::Device device, bool capture)
    : model_(model), cache_(cache) {
  const auto longs = torch::TensorOptions().device(device).dtype(torch::kLong);
  token_ = torch::zeros({batch, 1}, longs);
  position_ = torch::zeros({1}, longs);
  if (capture) {
    graph_ = std::make_unique<CapturedGraph>([this] { run_step(); }, device, kWarmupSteps);
  }
}

void StaticDecode::run_step() {
  next_ = model_.next_token_logits_at(token_, position_, cache_).argmax(-1, /*keepdim=*/true);
}

torch::Tensor StaticDecode::step(const torch::Tensor& token) {
  token_.copy_(token);
  position_.fill_(cache_.length);
  if (graph_) {
    graph_->replay();
  } else {
    run_step();
  }
  ++cache_.length;
  return next_;
}

}  // namespace gpubench
