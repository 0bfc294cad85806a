#!/usr/bin/env python3
"""The fine-tuning benchmarks in Hugging Face transformers and peft, for side-by-side comparison
with gpubench: the same published configuration (built from its config, no weights downloaded),
BertForPreTraining or LlamaForCausalLM with SDPA attention, the same synthetic batch (BERT: 15 %
of positions as masked-LM targets and next-sentence labels; Llama: next-token targets), the same
recipe (full, or LoRA r/alpha on the attention projections with the frozen base in the compute
dtype and float32 adapters, PEFT's defaults), AdamW (lr 1e-4, weight decay 0.01, fused on CUDA),
autocast and loss scaling as gpubench does them; fp8 as torchao's float8 training (every aligned
linear layer but LoRA's adapters converted, the rest under bf16 autocast) where torchao imports,
else plain bf16, which the output's "reference" names; warm-up, trials of steps timed between device
synchronisations, the median trial. Prints one JSON object (and writes it to --output) with the
throughput in gpubench's unit (sequences/sec for BERT, tokens/sec for Llama), the peak allocated
memory and the parameter counts Hugging Face reports."""
import argparse
import contextlib
import statistics

import torch

from trial_timing import (backward_and_step, emit_result, keep_freed_host_memory, profile_trial,
                          synchronizer, time_trials)

LLAMA3_ROPE = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 8192}
LLAMA31_ROPE = dict(LLAMA3_ROPE, factor=8.0)
LLAMA31 = dict(vocab_size=128256, num_key_value_heads=8, rope_theta=500000.0, rope_scaling=LLAMA31_ROPE,
               tie_word_embeddings=False, max_position_embeddings=131072)
# gpubench name -> (family, config); the test models are gpubench's hidden ones, for rehearsals.
CONFIGS = {
    "bert-large": ("bert", dict(vocab_size=30522, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                intermediate_size=4096, max_position_embeddings=512)),
    "test-tiny-bert": ("bert", dict(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=64, max_position_embeddings=64)),
    "llama-3.2-1b": ("llama", dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                                   num_attention_heads=32, num_key_value_heads=8, rope_theta=500000.0,
                                   rope_scaling=LLAMA3_ROPE, tie_word_embeddings=True, max_position_embeddings=131072)),
    "llama-2-7b": ("llama", dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                                 num_attention_heads=32, num_key_value_heads=32, rope_theta=10000.0,
                                 tie_word_embeddings=False, max_position_embeddings=4096)),
    "llama-3-8b": ("llama", dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                 num_attention_heads=32, num_key_value_heads=8, rope_theta=500000.0,
                                 tie_word_embeddings=False, max_position_embeddings=8192)),
    "llama-3.1-8b": ("llama", dict(LLAMA31, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                   num_attention_heads=32)),
    "llama-3.1-70b": ("llama", dict(LLAMA31, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                                    num_attention_heads=64)),
    "llama-3.1-405b": ("llama", dict(LLAMA31, hidden_size=16384, intermediate_size=53248, num_hidden_layers=126,
                                     num_attention_heads=128)),
    "test-tiny-llama": ("llama", dict(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False,
                                      max_position_embeddings=64)),
}
# gpubench's LoRA roles -> the module names PEFT matches.
ROLES = {"llama": {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj", "up": "up_proj",
                   "down": "down_proj"},
         "bert": {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
                  "o": "attention.output.dense", "up": "intermediate.dense", "down": "output.dense"}}


def build(name, tuning, precision, device, checkpointing, args):
    import transformers
    family, config = CONFIGS[name]
    half = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8": torch.bfloat16}.get(precision)
    # LoRA's frozen base in the compute dtype, built where it trains, as gpubench does.
    dtype = half if tuning == "lora" and half else torch.float32
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    with torch.device(device):
        if family == "bert":
            model = transformers.BertForPreTraining(transformers.BertConfig(attn_implementation="sdpa", **config))
        else:
            model = transformers.LlamaForCausalLM(transformers.LlamaConfig(attn_implementation="sdpa", **config))
    torch.set_default_dtype(previous)
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    if tuning == "lora":
        import peft
        roles = ROLES[family]
        targets = list(roles) if args.lora_targets == "all-linear" else args.lora_targets.split(",")
        pattern = r".*\.(" + "|".join(roles[t].replace(".", r"\.") for t in targets) + r")$"
        if checkpointing:
            model.enable_input_require_grads()
        model = peft.get_peft_model(model, peft.LoraConfig(r=args.lora_rank, lora_alpha=args.lora_alpha,
                                                           lora_dropout=0.0, target_modules=pattern))
    model.train()
    params = sum(p.numel() for p in model.parameters())  # shared (tied) tensors once, adapters in
    reference = precision
    if precision == "fp8":
        reference = float8_training(model, args.fp8_recipe)
    return family, model, params, config["vocab_size"], reference


def float8_training(model, recipe):
    """torchao's float8 training on the linear layers gpubench runs in FP8 (sides multiples of 16,
    LoRA's adapters left in bf16); what ran, in words."""
    try:
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    except ImportError:
        return "bf16 (torchao does not import)"

    def aligned(module, fqn):
        return "lora_" not in fqn and module.in_features % 16 == 0 and module.out_features % 16 == 0

    convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name(recipe),
                               module_filter_fn=aligned)
    import torchao
    return f"torchao {torchao.__version__} float8 {recipe}"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=sorted(CONFIGS), default="bert-large")
    parser.add_argument("--tuning", choices=["full", "lora"], default="full")
    parser.add_argument("--precision", choices=["fp32", "tf32", "fp16", "bf16", "fp8"], default="bf16")
    parser.add_argument("--fp8-recipe", choices=["tensorwise", "rowwise"], default="tensorwise")
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--lora-rank", type=int, default=16)
    parser.add_argument("--lora-alpha", type=int, default=32)
    parser.add_argument("--lora-targets", default="q,k,v,o")
    parser.add_argument("--activation-checkpointing", action="store_true")
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cpu: only to rehearse scripts/gpu-check.sh on a machine without a GPU")
    parser.add_argument("--profile", metavar="FILE",
                        help="after the trials, one more under torch.profiler: its Chrome trace to FILE "
                             "(docs/profiling.md)")
    parser.add_argument("--output")
    args = parser.parse_args()

    device = torch.device(args.device)
    if device.type == "cpu":
        keep_freed_host_memory()
    tf32 = args.precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.manual_seed(42)
    family, model, params, vocab, reference = build(args.model, args.tuning, args.precision, device,
                                         args.activation_checkpointing, args)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    b, s = args.batch_size, args.seq_len
    if family == "bert":
        tokens = torch.randint(vocab, (b, s), device=device)
        labels = torch.full((b, s), -100, device=device)
        masked = max(1, round(0.15 * s))
        chosen = torch.rand(b, s, device=device).argsort(1)[:, :masked]
        labels.scatter_(1, chosen, torch.randint(vocab, (b, masked), device=device))
        inputs = dict(input_ids=tokens, token_type_ids=(torch.arange(s, device=device) >= s // 2).long().expand(b, s),
                      attention_mask=torch.ones(b, s, dtype=torch.long, device=device), labels=labels,
                      next_sentence_label=torch.randint(2, (b,), device=device))
        samples_per_step, unit = b, "sequences/sec"
    else:
        stream = torch.randint(vocab, (b, s + 1), device=device)
        inputs, targets = stream[:, :s].contiguous(), stream[:, 1:].contiguous()
        samples_per_step, unit = b * s, "tokens/sec"
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, weight_decay=0.01,
                                  fused=device.type == "cuda")
    autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8": torch.bfloat16}.get(args.precision)
    scaler = torch.amp.GradScaler(args.device) if args.precision == "fp16" else None

    def step():
        optimizer.zero_grad(set_to_none=True)
        # No autocast context in fp32/tf32: torch 1.13's CPU autocast refuses float32 even disabled.
        with (torch.autocast(args.device, dtype=autocast_dtype) if autocast_dtype else contextlib.nullcontext()):
            if family == "bert":
                loss = model(**inputs).loss
            else:  # the causal-LM loss over every position, in float32, as gpubench computes it
                logits = model(input_ids=inputs).logits
                loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, vocab), targets.reshape(-1))
        backward_and_step(loss, optimizer, scaler)

    synchronize = synchronizer(device)

    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    warmup_s, trials = time_trials(step, synchronize, args.warmup_steps, args.steps, args.repeat,
                                   samples_per_step)
    import transformers
    result = {"model": args.model, "tuning": args.tuning, "precision": args.precision, "reference": reference,
              "batch_size": b,
              "seq_len": s, "activation_checkpointing": args.activation_checkpointing, "warmup_s": warmup_s,
              "throughput": statistics.median(trials), "throughput_unit": unit, "trials": trials,
              "params": params, "trainable_params": trainable,
              "peak_memory_bytes": torch.cuda.max_memory_allocated() if device.type == "cuda" else None,
              "torch": torch.__version__, "transformers": transformers.__version__,
              "gpu": torch.cuda.get_device_name() if device.type == "cuda" else "cpu"}
    if args.profile:
        result["profile"] = {"trace": args.profile, "steps": args.steps, "throughput": profile_trial(
            step, synchronize, args.steps, samples_per_step, args.profile, device.type == "cuda")}
    emit_result(result, args.output)


if __name__ == "__main__":
    main()
