#!/usr/bin/env bash
# fit --task infer against the run it predicts (docs/memory.md, "Inference"): the prediction of
# `gpubench fit --task infer` and the peak `gpubench infer` measures with the same settings, and
# their ratio. A benchmark, not a test: a model the host can hold, on the CPU by default.
# Usage: scripts/check-inference-fit.sh MODEL BATCH PROMPT GEN [infer's options...] [--probe blocks]
# e.g.   scripts/check-inference-fit.sh llama-3.2-1b 4 64 16 --precision bf16 --probe blocks
# GPUBENCH_BUILD_DIR: the build to use (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
gb="${GPUBENCH_BUILD_DIR:-build}/gpubench"
model=$1 batch=$2 prompt=$3 gen=$4
shift 4
run_options=() fit_options=()
while [ $# -gt 0 ]; do
  if [ "$1" = --probe ]; then fit_options+=("$1" "$2"); shift 2; continue; fi
  run_options+=("$1"); shift
done
grep -q -- "--device" <<< "${run_options[*]:-}" || run_options+=(--device cpu)
shape=(--model "$model" --batch-size "$batch" --prompt-len "$prompt" --gen-len "$gen")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$gb" fit --task infer "${shape[@]}" "${run_options[@]}" "${fit_options[@]}" --memory 80GB \
  --format json --output "$scratch/fit.json"
"$gb" --log-level warn infer "${shape[@]}" "${run_options[@]}" --warmup-steps 1 --steps 1 \
  --repeat 1 --telemetry-interval-ms 0 --output "$scratch/run.json" > "$scratch/run.log" 2>&1 ||
  { tail -3 "$scratch/run.log"; exit 1; }
python3 - "$scratch/fit.json" "$scratch/run.json" "$*" <<'PY'
import json, sys
fit, run = (json.load(open(p)) for p in sys.argv[1:3])
predicted, measured = fit["predicted_peak_bytes"], run["metrics"]["memory"]["peak_bytes"]
print(f"predicted {predicted} bytes, measured {measured}: {predicted / measured:.4f}")
PY
