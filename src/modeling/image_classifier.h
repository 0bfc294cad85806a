// A TrainableModel for any image classification network: synthetic images and labels on the
// device, cross-entropy on the main logits plus the auxiliary heads at their reference weights.
#pragma once

#include <utility>
#include <vector>

#include <torch/torch.h>

#include "modeling/model_registry.h"

namespace gpubench {

struct ClassifierOutput {
  torch::Tensor logits;
  std::vector<torch::Tensor> aux_logits;  // only in training mode, for networks that have them
};

// Net is a TORCH_MODULE holder whose forward(x) returns ClassifierOutput.
template <typename Net>
class ImageClassifier : public TrainableModel {
 public:
  ImageClassifier(Net net, std::vector<int64_t> input_shape, int64_t num_classes,
                  std::vector<double> aux_loss_weights = {})
      : net_(std::move(net)),
        input_shape_(std::move(input_shape)),
        num_classes_(num_classes),
        aux_loss_weights_(std::move(aux_loss_weights)) {}

  torch::nn::Module& module() override { return *net_; }

  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                 bool channels_last) override {
    std::vector<int64_t> shape{batch_size};
    shape.insert(shape.end(), input_shape_.begin(), input_shape_.end());
    torch::Tensor images = torch::randn(shape, torch::TensorOptions().device(device));
    if (channels_last) images = images.contiguous(torch::MemoryFormat::ChannelsLast);
    torch::Tensor labels = torch::randint(
        num_classes_, {batch_size}, torch::TensorOptions().device(device).dtype(torch::kLong));
    return {images, labels, {}};
  }

  torch::Tensor training_loss(const SyntheticBatch& batch) override {
    ClassifierOutput output = net_->forward(batch.inputs);
    torch::Tensor loss = torch::cross_entropy_loss(output.logits.to(torch::kFloat), batch.targets);
    for (size_t i = 0; i < output.aux_logits.size() && i < aux_loss_weights_.size(); ++i) {
      loss =
          loss + aux_loss_weights_[i] * torch::cross_entropy_loss(
                                            output.aux_logits[i].to(torch::kFloat), batch.targets);
    }
    return loss;
  }

  torch::Tensor inference_output(const SyntheticBatch& batch) override {
    return net_->forward(batch.inputs).logits;
  }

  int64_t count_forward() override {
    std::vector<int64_t> shape{1};
    shape.insert(shape.end(), input_shape_.begin(), input_shape_.end());
    net_->forward(torch::zeros(shape));
    return 1;
  }

 private:
  Net net_;
  std::vector<int64_t> input_shape_;
  int64_t num_classes_;
  std::vector<double> aux_loss_weights_;
};

inline constexpr int64_t kImageNetClasses = 1000;

// The registry entry of an image classifier: `make_net` builds a fresh Net.
template <typename Net, typename MakeNet>
ModelInfo image_classifier_info(std::string name, std::vector<std::string> aliases,
                                int64_t image_size, int64_t default_batch_size,
                                std::string reference, MakeNet make_net,
                                std::vector<double> aux_loss_weights = {}) {
  ModelInfo info;
  info.name = std::move(name);
  info.aliases = std::move(aliases);
  info.family = "convnet";
  info.prefers_channels_last = true;
  info.capabilities.input = SyntheticInput::kImages;
  info.capabilities.infers = true;
  info.capabilities.graph_training = true;
  info.capabilities.graph_inference = true;
  info.task = "image-classification";
  info.sample_unit = "images";
  info.input_shape = {3, image_size, image_size};
  info.default_batch_size = default_batch_size;
  info.reference = std::move(reference);
  info.create = [make_net, shape = info.input_shape,
                 aux_loss_weights](const ModelOptions&) -> std::unique_ptr<TrainableModel> {
    return std::make_unique<ImageClassifier<Net>>(make_net(kImageNetClasses), shape,
                                                  kImageNetClasses, aux_loss_weights);
  };
  return info;
}

}  // namespace gpubench
