#include "run/model_input_rules.h"

#include "common/errors.h"
#include "torch_support/vision_ops.h"

namespace gpubench::model_inputs {

void resolve_batch_size(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  out.batch_size = inputs.request.batch_size.value_or(info.default_batch_size);
  if (out.task == Task::kTrain && out.batch_size != kSearchBatchSize &&
      out.batch_size < info.min_training_batch) {
    throw UsageError("batch_size " + std::to_string(out.batch_size) + " is too small for " +
                     info.name + ", which trains at " + std::to_string(info.min_training_batch) +
                     " or more per device: " + info.min_training_batch_why);
  }
}

void resolve_segments(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  const ModelInfo& info = inputs.model;
  const bool segments = info.capabilities.input == SyntheticInput::kTokenSegments;
  if (!segments && (request.tgt_len || request.mem_len)) {
    throw UsageError("tgt_len and mem_len apply to language models only, not to '" + info.name +
                     "'");
  }
  if (segments) {
    out.tgt_len = request.tgt_len.value_or(info.default_tgt_len);
    out.mem_len = request.mem_len.value_or(info.default_mem_len);
  }
}

void resolve_objects(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  const ModelInfo& info = inputs.model;
  if (info.capabilities.input == SyntheticInput::kDetectionImages) {
    out.objects_per_image = request.objects_per_image.value_or(info.default_objects_per_image);
  } else if (request.objects_per_image) {
    throw UsageError("objects_per_image applies to the detection models (" +
                     models_where([](const ModelCapabilities& can) {
                       return can.input == SyntheticInput::kDetectionImages;
                     }) +
                     "), not to '" + info.name + "'");
  }
}

void require_vision_ops(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  (void)out;
  if (inputs.model.capabilities.needs_vision_ops) vision_ops::require(inputs.model.name);
}

void resolve_sequence_length(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  const ModelInfo& info = inputs.model;
  const bool sequences = info.capabilities.input == SyntheticInput::kTokenSequences;
  if (!sequences && request.seq_len) {
    throw UsageError("seq_len applies to the fine-tuning models (" +
                     models_where([](const ModelCapabilities& can) {
                       return can.input == SyntheticInput::kTokenSequences;
                     }) +
                     "), not to '" + info.name + "'");
  }
  if (sequences) {
    out.seq_len = request.seq_len.value_or(info.default_seq_len);
    if (info.max_seq_len > 0 && out.seq_len > info.max_seq_len) {
      throw UsageError("seq_len " + std::to_string(out.seq_len) + " is more than " + info.name +
                       "'s " + std::to_string(info.max_seq_len) + " positions");
    }
  }
}

void check_blocks(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  const ModelCapabilities& can = info.capabilities;
  if (out.blocks > 0) {
    if (can.blocks == 0) {
      throw UsageError("blocks applies to the transformer models (" +
                       models_where([](const ModelCapabilities& m) { return m.blocks > 0; }) +
                       "), not to '" + info.name + "'");
    }
    if (out.blocks > can.blocks) {
      throw UsageError("blocks " + std::to_string(out.blocks) + " is more than " + info.name +
                       "'s " + std::to_string(can.blocks) + ": at most " +
                       std::to_string(can.blocks));
    }
    if (out.task != Task::kTrain) {
      throw UsageError("blocks applies to training (a timeline for gpubench scale), not to infer");
    }
  }
}

void resolve_task(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  const ModelInfo& info = inputs.model;
  const ModelCapabilities& can = info.capabilities;
  if (!can.runs(out.task)) {
    const Task task = out.task;
    throw UsageError("'" + info.name + "' has no " +
                     (task == Task::kInfer ? "inference" : "training") + " path in gpubench; " +
                     to_string(task) + " runs " +
                     models_where([task](const ModelCapabilities& m) { return m.runs(task); }));
  }
  const bool lengths_given = request.prompt_len || request.gen_len;
  if (out.task == Task::kTrain) {
    if (lengths_given) {
      throw UsageError(
          "prompt_len and gen_len apply to inference (gpubench infer, fit --task infer) of the "
          "models that generate text (" +
          generating_models() + ")");
    }
    return;
  }
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(
        "batch_size max searches for the largest batch that trains; infer takes "
        "batch sizes (a list such as 1,8,32)");
  }
  if (uses_lora(out.tuning) || out.activation_checkpointing) {
    throw UsageError(
        "infer runs the model's own weights: tuning 'lora' and 'qlora' and "
        "activation_checkpointing are training settings");
  }
  if (!can.generates) {
    if (lengths_given) {
      throw UsageError("prompt_len and gen_len apply to the models that generate text (" +
                       generating_models() + "), not to '" + info.name + "'");
    }
    return;
  }
  if (request.seq_len) {
    throw UsageError("seq_len does not apply to infer with " + info.name +
                     ": its requests are a prompt (prompt_len) and generated tokens (gen_len)");
  }
  out.seq_len = 0;
  out.prompt_len = request.prompt_len.value_or(kDefaultPromptLength);
  out.gen_len = request.gen_len.value_or(kDefaultGenerationLength);
  if (out.gen_len < 2) {
    throw UsageError("gen_len must be at least 2, got " + std::to_string(out.gen_len) +
                     ": the prompt's pass gives the first token, the decode the rest");
  }
  if (info.max_seq_len > 0 && out.prompt_len + out.gen_len > info.max_seq_len) {
    throw UsageError("prompt_len " + std::to_string(out.prompt_len) + " + gen_len " +
                     std::to_string(out.gen_len) + " is more than " + info.name + "'s " +
                     std::to_string(info.max_seq_len) + " positions");
  }
  // A generation is a request of gen_len steps: a few make a trial.
  if (!request.warmup_steps) out.warmup_steps = 1;
  if (!request.steps) out.steps = 2;
}

void resolve_experts_per_token(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  const ModelInfo& info = inputs.model;
  const ModelCapabilities& can = info.capabilities;
  if (request.experts_per_token && can.experts == 0) {
    throw UsageError("experts_per_token applies to the mixtures of experts (" +
                     models_where([](const ModelCapabilities& c) { return c.experts > 0; }) +
                     "); " + info.name + " is a dense model");
  }
  out.experts_per_token = request.experts_per_token.value_or(can.experts_per_token);
  if (out.experts_per_token > can.experts) {
    throw UsageError("experts_per_token " + std::to_string(out.experts_per_token) +
                     " is more than " + info.name + "'s " + std::to_string(can.experts) +
                     " experts; give 1 to " + std::to_string(can.experts));
  }
}

void check_warmup_steps(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  if (!info.minimum_warmup_steps) return;
  const int needed = info.minimum_warmup_steps(out.tgt_len, out.mem_len);
  if (out.warmup_steps < needed) {
    throw UsageError("warmup_steps " + std::to_string(out.warmup_steps) + " are too few for " +
                     info.name + ": it needs at least " + std::to_string(needed));
  }
}

}  // namespace gpubench::model_inputs
