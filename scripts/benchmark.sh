#!/usr/bin/env bash
# The README's first command: set up, then train ResNet-50 on synthetic data and print the result.
# On a GPU: the model's default batch, 20 warm-up and 100 timed steps, 3 trials, fp16.
# Without one: fp32 on the CPU, batch 16, sized to finish in a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh gpubench gpubench-train  # only what it runs: no tests
gpubench=build/gpubench
if "$gpubench" env | grep -q '"gpu_count": 0'; then
  exec "$gpubench" train --model resnet50 --device cpu --precision fp32 \
    --batch-size 16 --warmup-steps 2 --steps 8 --repeat 3 --output results "$@"
fi
exec "$gpubench" train --model resnet50 --device cuda --precision fp16 \
  --warmup-steps 20 --steps 100 --repeat 3 --output results "$@"
