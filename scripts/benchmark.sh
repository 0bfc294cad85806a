#!/usr/bin/env bash
# The README's first command: set up, then train ResNet-50 on synthetic data and print the result.
# On a GPU: the model's default batch, 20 warm-up and 100 timed steps, 3 trials, fp16.
# Without one: fp32 on the CPU, batch 16, sized to finish in a few minutes on 2 cores. A build
# with CUDA that cannot use a GPU (no driver, a driver older than its CUDA, no device visible)
# says why in one line and runs on the CPU.
# Extra arguments go to `gpubench train`; an option given there (by its long name) replaces the
# default below.
# GPUBENCH_BUILD_DIR names the build folder; GPUBENCH_BINARY a gpubench to run instead, with no
# setup (the GPU check runs the bundle's this way).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${GPUBENCH_BINARY-}" ]; then
  gpubench=$GPUBENCH_BINARY
else
  bash scripts/setup.sh gpubench gpubench-train  # only what it runs: no tests
  gpubench="${GPUBENCH_BUILD_DIR:-build}/gpubench"
fi
environment=$("$gpubench" env)
sed -n '1,2s/^/benchmark.sh: /p' <<<"$environment"
# run OPTION VALUE...: gpubench train with these defaults, less those the arguments give.
run() {
  local chosen=()
  while [ $# -gt 0 ]; do
    local option=$1 value=$2 given=0 argument
    shift 2
    for argument in "${arguments[@]}"; do
      [[ "$argument" == "$option" || "$argument" == "$option="* ]] && given=1
    done
    [ "$given" = 1 ] || chosen+=("$option" "$value")
  done
  exec "$gpubench" train "${chosen[@]}" "${arguments[@]}"
}
arguments=("$@")
if grep -q '^gpus: none usable' <<<"$environment"; then
  if grep -q '^libtorch: .*, with CUDA' <<<"$environment"; then
    echo "benchmark.sh: this gpubench has CUDA but $(sed -n 's/^gpus: none usable: //p' <<<"$environment" | head -1); training on the CPU"
  fi
  run --model resnet50 --device cpu --precision fp32 --batch-size 16 --warmup-steps 2 --steps 8 \
    --repeat 3 --output results
fi
run --model resnet50 --device cuda --precision fp16 --warmup-steps 20 --steps 100 --repeat 3 \
  --output results
