// The zoo's image classifiers (include/gpubench/image_classifier.h) as registry entries.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpubench/image_classifier.h"
#include "modeling/model_registry.h"

namespace gpubench {

// The registry entry of an image classifier: `make_net` builds a fresh Net.
template <typename Net, typename MakeNet>
ModelInfo image_classifier_info(std::string name, std::vector<std::string> aliases,
                                int64_t image_size, int64_t default_batch_size,
                                std::string reference, MakeNet make_net,
                                std::vector<double> aux_loss_weights = {}) {
  return model_info_of(image_classifier<Net>(std::move(name), std::move(aliases), image_size,
                                             default_batch_size, std::move(reference),
                                             std::move(make_net), std::move(aux_loss_weights)));
}

}  // namespace gpubench
