// The settings' order: the identity text's, the options', the options reference's and the
// result's "benchmark" block's. Every setting's key once (settings/benchmark_settings.def and the
// features' rows it gathers); the field table is sorted by it and refuses a key missing here.
// Changing it changes every identity text reports show (docs/reports.md) and the options' order.
#pragma once

namespace gpubench {

inline constexpr const char* kSettingOrder[] = {
    "model",
    "precision",
    "fp8_recipe",
    "device",
    "gpus",
    "tensor_parallel",
    "expert_parallel",
    "shard",
    "batch_size",
    "warmup_steps",
    "steps",
    "repeat",
    "seed",
    "channels_last",
    "tgt_len",
    "mem_len",
    "threads",
    "bucket_mb",
    "timeout",
    "mode",
    "telemetry_interval_ms",
    "seq_len",
    "objects_per_image",
    "blocks",
    "tuning",
    "lora_rank",
    "lora_alpha",
    "lora_targets",
    "activation_checkpointing",
    "memory_limit",
    "task",
    "prompt_len",
    "gen_len",
    "experts_per_token",
    "kv_cache",
    "weights",
    "weight_group",
    "deterministic",
    "optimizer",
    "profile",
    "timeline",
};

}  // namespace gpubench
