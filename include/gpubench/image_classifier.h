// An image classifier of your own (docs/api.md): a TrainableModel for any image classification
// network (synthetic images and labels on the device; cross-entropy on the main logits, plus the
// auxiliary heads at their reference weights), and its declaration.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "gpubench/model.h"

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

// The declaration of an image classifier of ImageNet's 1000 classes, with `image_size` square
// RGB images: `make_net(classes)` builds a fresh Net, a TORCH_MODULE holder whose forward(x)
// returns ClassifierOutput.
template <typename Net, typename MakeNet>
ModelDeclaration image_classifier(std::string name, std::vector<std::string> aliases,
                                  int64_t image_size, int64_t default_batch_size,
                                  std::string reference, MakeNet make_net,
                                  std::vector<double> aux_loss_weights = {}) {
  ModelDeclaration model;
  model.name = std::move(name);
  model.aliases = std::move(aliases);
  model.family = "convnet";
  model.task = "image-classification";
  model.sample_unit = "images";
  model.input = SyntheticInput::kImages;
  model.input_shape = {3, image_size, image_size};
  model.default_batch_size = default_batch_size;
  model.reference = std::move(reference);
  model.infers = true;
  model.graph_training = true;
  model.graph_inference = true;
  model.prefers_channels_last = true;
  model.create = [make_net, shape = model.input_shape,
                  aux_loss_weights](const ModelBuild&) -> std::unique_ptr<TrainableModel> {
    return std::make_unique<ImageClassifier<Net>>(make_net(kImageNetClasses), shape,
                                                  kImageNetClasses, aux_loss_weights);
  };
  return model;
}

}  // namespace gpubench
