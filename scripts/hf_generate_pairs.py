#!/usr/bin/env python3
"""Greedy decode in gpubench beside Hugging Face transformers' `generate`, in interleaved pairs
(docs/inference.md#beside-hugging-face): the same published configuration (hf_reference.py's
CONFIGS, built from its config, random weights, bf16), the same batch, prompt and generated
lengths, the same LibTorch threads, on the wheel this Python imports (build gpubench against it:
scripts/check-torch2.sh). Each round runs gpubench once (`gpubench infer`, its median trial of
decode tokens/sec) and then transformers once, and the order alternates, so that a machine whose
speed drifts shifts both sides alike. transformers' decode rate is batch x (gen_len - 1) generated
tokens over the time of generate(gen_len) less the time of generate(1) (its prefill and first
token), each the median of `--repeat` timed calls after a warm-up. Prints each pair and the median
ratio gpubench / transformers as one JSON object (and writes it to --output)."""
import argparse
import json
import statistics
import subprocess
import tempfile
import time

import torch

from hf_reference import CONFIGS
from trial_timing import emit_result


def hf_decode_rate(model, prompt, gen_len, repeat):
    def timed(new_tokens):
        times = []
        for _ in range(repeat + 1):  # the first is the warm-up
            start = time.perf_counter()
            model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                           use_cache=True, pad_token_id=0)
            times.append(time.perf_counter() - start)
        return statistics.median(times[1:])
    first = timed(1)
    whole = timed(gen_len)
    return prompt.shape[0] * (gen_len - 1) / (whole - first)


def gpubench_decode_rate(args):
    with tempfile.TemporaryDirectory() as folder:
        result = f"{folder}/result.json"
        subprocess.run([args.gpubench, "--log-level", "warn", "infer", "--model", args.model, "--device", "cpu",
                        "--precision", "bf16", "--batch-size", str(args.batch_size), "--prompt-len",
                        str(args.prompt_len), "--gen-len", str(args.gen_len), "--threads", str(args.threads),
                        "--warmup-steps", "1", "--steps", "1", "--repeat", str(args.repeat), "--output", result],
                       check=True, stdout=subprocess.DEVNULL)
        with open(result) as f:
            return json.load(f)["metrics"]["inference"]["decode_tokens_per_second"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpubench", default="build-torch2/gpubench")
    parser.add_argument("--model", choices=sorted(k for k, v in CONFIGS.items() if v[0] == "llama"),
                        default="llama-3.2-1b")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--prompt-len", type=int, default=128)
    parser.add_argument("--gen-len", type=int, default=32)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--output")
    args = parser.parse_args()

    import transformers
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(attn_implementation="sdpa", **CONFIGS[args.model][1])
    model = transformers.LlamaForCausalLM(config).to(torch.bfloat16).eval()
    prompt = torch.randint(config.vocab_size, (args.batch_size, args.prompt_len))
    pairs = []
    with torch.inference_mode():
        for i in range(args.pairs):
            sides = ["gpubench", "transformers"] if i % 2 == 0 else ["transformers", "gpubench"]
            rates = {}
            for side in sides:
                rates[side] = (gpubench_decode_rate(args) if side == "gpubench"
                               else hf_decode_rate(model, prompt, args.gen_len, args.repeat))
            rates["ratio"] = rates["gpubench"] / rates["transformers"]
            pairs.append(rates)
            print(f"pair {i + 1} ({sides[0]} first): gpubench {rates['gpubench']:.2f}, transformers "
                  f"{rates['transformers']:.2f} decode tokens/sec, x{rates['ratio']:.3f}", flush=True)
    summary = {"model": args.model, "batch_size": args.batch_size, "prompt_len": args.prompt_len,
               "gen_len": args.gen_len, "threads": args.threads, "torch": torch.__version__,
               "transformers": transformers.__version__, "pairs": pairs,
               "median_ratio": statistics.median(p["ratio"] for p in pairs)}
    emit_result(summary, args.output)


if __name__ == "__main__":
    main()
