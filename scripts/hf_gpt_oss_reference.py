#!/usr/bin/env python3
"""The reference logits gpubench's gpt-oss is checked against (tests/models/gpt_oss_test.cpp):
Hugging Face transformers' GptOssForCausalLM, eager attention, float32, at a tiny configuration of
the same architecture (two layers: one sliding, one full), every weight set by a formula that the
test computes too, so the fixture holds only the configuration, the tokens and the logits.

    python3 scripts/hf_gpt_oss_reference.py tests/fixtures/gpt_oss_reference.json

Needs torch and transformers (5.x); not run by CI, which reads the committed fixture."""
import json
import math
import sys

import torch
import transformers

CONFIG = dict(vocab_size=64, hidden_size=16, intermediate_size=16, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, head_dim=4, num_local_experts=4, num_experts_per_tok=2, sliding_window=4,
              max_position_embeddings=512, rms_norm_eps=1e-5, swiglu_limit=7.0, tie_word_embeddings=False,
              rope_parameters={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0, "beta_fast": 32.0,
                               "beta_slow": 1.0, "truncate": False, "original_max_position_embeddings": 16})
TOKENS = [[3, 17, 42, 8, 8, 61, 0, 25, 33, 12, 50, 7], [9, 9, 1, 63, 30, 4, 22, 15, 40, 2, 11, 58]]


def formula(index, shape, name):
    """The parameter's values: flat element j of the index-th name (sorted) is
    a sin(0.61 j + 1.7 index + 0.3), plus 1 for the norms; a = 1 for the embedding, 0.2 otherwise."""
    count = math.prod(shape)
    j = torch.arange(count, dtype=torch.float64)
    values = torch.sin(0.61 * j + 1.7 * index + 0.3)
    if "norm" in name:
        values = 1 + 0.1 * values
    else:
        values = values * (1.0 if "embed_tokens" in name else 0.2)
    return values.to(torch.float32).reshape(shape)


def main():
    config = transformers.GptOssConfig(**CONFIG)
    config._attn_implementation = "eager"
    model = transformers.GptOssForCausalLM(config).eval()
    names = sorted(name for name, _ in model.named_parameters())
    with torch.no_grad():
        parameters = dict(model.named_parameters())
        for index, name in enumerate(names):
            parameters[name].copy_(formula(index, tuple(parameters[name].shape), name))
        logits = model(torch.tensor(TOKENS)).logits
    document = {
        "source": "transformers " + transformers.__version__ + " GptOssForCausalLM, eager attention, float32 "
                  "(scripts/hf_gpt_oss_reference.py)",
        "config": {k: v for k, v in CONFIG.items() if k != "rope_parameters"},
        "parameters": [[name, list(parameters[name].shape)] for name in names],
        "tokens": TOKENS,
        "logits": [[[round(float(x), 7) for x in row] for row in sequence] for sequence in logits],
    }
    with open(sys.argv[1], "w") as out:
        json.dump(document, out, separators=(",", ":"))
        out.write("\n")


if __name__ == "__main__":
    main()
