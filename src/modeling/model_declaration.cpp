// A model of one's own (include/gpubench/model.h) as a registry entry.
#include <cstdio>

#include "modeling/model_registry.h"

namespace gpubench {

ModelInfo model_info_of(const ModelDeclaration& declaration) {
  ModelInfo info;
  info.name = declaration.name;
  info.aliases = declaration.aliases;
  info.family = declaration.family;
  info.task = declaration.task;
  info.sample_unit = declaration.sample_unit;
  info.input_shape = declaration.input_shape;
  info.default_batch_size = declaration.default_batch_size;
  info.default_seq_len = declaration.default_seq_len;
  info.max_seq_len = declaration.max_seq_len;
  info.reference = declaration.reference;
  info.optimizer = declaration.optimizer;
  info.prefers_channels_last = declaration.prefers_channels_last;
  ModelCapabilities& can = info.capabilities;
  can.input = declaration.input;
  can.infers = declaration.infers;
  can.graph_training = declaration.graph_training;
  can.graph_inference = declaration.graph_inference;
  can.products_in_linear_layers = declaration.products_in_linear_layers;
  info.create = [create = declaration.create](const ModelOptions& options) {
    return create(ModelBuild{options.seq_len});
  };
  return info;
}

bool register_model(const ModelDeclaration& declaration) {
  // At start-up, before main: a throw would end the process with no word of why.
  const char* missing = declaration.name.empty() ? "name"
                        : !declaration.create    ? "create function"
                                                 : "";
  if (*missing != '\0') {
    std::fprintf(stderr, "gpubench: model '%s' is not registered: its declaration has no %s\n",
                 declaration.name.c_str(), missing);
    return false;
  }
  // Segments with a memory (Transformer-XL's) and images with boxes need what their models
  // declare beyond a ModelDeclaration.
  if (declaration.input != SyntheticInput::kImages &&
      declaration.input != SyntheticInput::kTokenSequences) {
    std::fprintf(stderr,
                 "gpubench: model '%s' is not registered: a declared model reads images or token "
                 "sequences, not %s\n",
                 declaration.name.c_str(), to_string(declaration.input).c_str());
    return false;
  }
  if (ModelRegistry::instance().find(declaration.name) != nullptr) {
    std::fprintf(stderr, "gpubench: model '%s' is not registered: the name is taken\n",
                 declaration.name.c_str());
    return false;
  }
  ModelRegistry::instance().add(model_info_of(declaration));
  return true;
}

}  // namespace gpubench
