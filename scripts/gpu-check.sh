#!/usr/bin/env bash
# The GPU check, in stages that each fit a short GPU slot (one stage per call, the build
# included: about 75 s on an H200 with 16 cores). Usage: scripts/gpu-check.sh STAGE...
#   smoke     every CUDA path once, with few steps, in at most 480 s with the build (run it first,
#             with a timeout_s of 580): ResNet-50 fp16 eager, graph and PyTorch; an NCCL group of
#             one; graph mode at batch 32, GoogLeNet and BERT-large; the graph-vs-eager losses;
#             Llama LoRA fp16 and checkpointed; infer eager and graph; fit then the run; batch max;
#             Transformer-XL; a suite; NVML against nvidia-smi; Llama 3 8B LoRA beside Hugging
#             Face (scripts/gpu_smoke.py). One summary table, results/gpu/<gpu>/check-smoke.txt
#   quick     ResNet-50 at batch 256 in fp32, tf32, fp16 and bf16: gpubench eager and graph mode,
#             PyTorch eager (scripts/torch_reference.py) side by side; ResNet-50 fp16 as an NCCL
#             process group of one rank (NCCL cannot put two ranks on one GPU)
#   graph     the launch-bound cases (ResNet-50 fp16 at batch 32, GoogLeNet fp16 at 128) in all
#             four modes: gpubench eager and graph, PyTorch eager and torch.compile (default and
#             reduce-overhead); then 20 deterministic fp32 steps from one seed in eager and in
#             graph mode, whose final losses must agree within 1e-3 relative (else the stage fails)
#   zoo       the other convnets in fp16 at batch 128, gpubench and PyTorch
#   zoo-fp32  the same in fp32 (TF32 off)
#   lm        Transformer-XL base and large in fp16 (gpubench only: NVIDIA's model code is not on
#             the machine), then the NCCL all-reduce sweep on one rank (8 B to 256 MiB)
#   finetune  bf16: BERT-large at seq 128 (batch 32), Llama 3 8B LoRA (r16, alpha 32, q,k,v,o) at
#             seq 2048 and batch 1, and Llama 3.2 1B LoRA the same; gpubench beside Hugging Face
#             transformers + peft (scripts/hf_reference.py, same configuration, recipe and batch),
#             with both peak memories
#   memory    gpubench fit (for 48GB and 80GB cards too) and then the real run: Llama 3 8B LoRA
#             bf16 at seq 2048 batch 4 and BERT-large bf16 at seq 512 batch 16, predicted against
#             measured peak; ResNet-50 fp16 --batch-size max (the batch fit predicted, the one the
#             probes found)
#   infer     gpubench infer: ResNet-50 fp16 at batches 1 and 256, Llama 3 8B bf16 generating 128
#             tokens after a 512-token prompt at batches 1 and 16: throughput, latency, prefill and
#             decode tokens/sec, time to first token, time per output token, the KV cache
# Each benchmark prints its table row as soon as it ends, so a stage stopped at its time limit
# still shows what it measured; GPUBENCH_CHECK_BUDGET_S (default 420) skips a stage's remaining
# benchmarks once it has run that long. gpubench's result files go to results/gpu/<gpu>/ (for
# example results/gpu/nvidia-h200/; not the group of one's, which report would take for the
# plain run), the table to results/gpu/<gpu>/check-<stage>.txt; after every benchmark both are
# packed into $OUT/results-<gpu>.tar.gz (unpack it in the repository's root), beside the logs,
# env.json, pytorch.jsonl and allreduce.json ($OUT defaults to /tmp/gpubench-gpu-check). Each
# row is followed by the eager run's telemetry (power, J/sample, clocks, throttle reasons, % of
# the datasheet peak), and nvidia-smi samples the same stage into nvidia-smi-<stage>.csv.
# Needs: an NVIDIA GPU, python3 with torch, torchvision and timm, cmake, ninja, and the Debian
# libraries gpubench builds with: installed, or unpacked by scripts/fetch-gpu-deps.sh into
# .deps/gpu-root (for a machine without apt; carry .deps there). GPUBENCH_CHECK_* resize it;
# GPUBENCH_CHECK_DEVICE=cpu rehearses the script on a machine without a GPU (tiny sizes, CPU
# precisions, no Transformer-XL, results in results/gpu/cpu-rehearsal/): it checks the script,
# not a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# The checks run the hidden test models (test-tiny-*) where a real model is not needed.
export GPUBENCH_TEST_HOOKS=1
[ $# -gt 0 ] || { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
for stage in "$@"; do
  case "$stage" in smoke|quick|graph|zoo|zoo-fp32|lm|finetune|memory|infer) ;;
    *) echo "gpu-check: unknown stage '$stage'; stages: smoke, quick, graph, zoo, zoo-fp32, lm, finetune, memory, infer" >&2; exit 2 ;;
  esac
done
OUT="${OUT:-/tmp/gpubench-gpu-check}"
mkdir -p "$OUT"
script_start=$(date +%s)
SMOKE_BUDGET_S="${GPUBENCH_CHECK_SMOKE_BUDGET_S:-480}"  # the smoke stage's whole call, build included
DEVICE="${GPUBENCH_CHECK_DEVICE:-cuda}"
if [ "$DEVICE" = cpu ]; then  # the rehearsal's defaults: each benchmark a few seconds
  : "${GPUBENCH_CHECK_WARMUP:=1}" "${GPUBENCH_CHECK_STEPS:=1}" "${GPUBENCH_CHECK_BATCH:=2}"
  : "${GPUBENCH_CHECK_PRECISIONS:=fp32 bf16}" "${GPUBENCH_CHECK_GROUP_PRECISION:=fp32}"
  : "${GPUBENCH_CHECK_ZOO:=googlenet}" "${GPUBENCH_CHECK_ZOO_BATCH:=2}"
  : "${GPUBENCH_CHECK_ZOO_PRECISION:=bf16}" "${GPUBENCH_CHECK_TXL:= }" "${GPUBENCH_CHECK_ALLREDUCE_MAX:=1M}"
  : "${GPUBENCH_CHECK_GRAPH_MODE:=0}" "${GPUBENCH_CHECK_COMPILE_MODES:= }"
  : "${GPUBENCH_CHECK_GRAPH_BATCH:=2}" "${GPUBENCH_CHECK_GRAPH_GOOGLENET_BATCH:=2}"
  : "${GPUBENCH_CHECK_FINETUNE:=test-tiny-bert:16:2:full test-tiny-llama:32:1:lora}"
  : "${GPUBENCH_CHECK_MEMORY:=test-tiny-llama:32:4:lora test-tiny-bert:16:8:full}"
  : "${GPUBENCH_CHECK_MAX_MODEL:=test-tiny-llama}" "${GPUBENCH_CHECK_MAX_LIMIT:=8M}"
  : "${GPUBENCH_CHECK_INFER_IMAGE:=test-tiny-cnn:1,8}" "${GPUBENCH_CHECK_INFER_LLM:=test-tiny-llama:16:8:1,4}"
fi
GRAPH_MODE="${GPUBENCH_CHECK_GRAPH_MODE:-1}"  # 0: no gpubench graph-mode runs (the CPU has none)
# PyTorch's torch.compile modes for the graph stage (the others run PyTorch eager only).
COMPILE_MODES="${GPUBENCH_CHECK_COMPILE_MODES:-compile reduce-overhead}"
failed_checks=0
WARMUP="${GPUBENCH_CHECK_WARMUP:-10}"
STEPS="${GPUBENCH_CHECK_STEPS:-30}"
BUDGET_S="${GPUBENCH_CHECK_BUDGET_S:-420}"
log="$OUT/gpu-check.log"
scratch=$(mktemp -d)  # PyTorch's results and the group-of-one run: at most 8 files come back
trap 'rm -rf "$scratch"' EXIT

# The plain GPU build of docs/gpu-machines.md; the Debian libraries from .deps/gpu-root where there is no apt.
if [ -d .deps/gpu-root/usr ]; then
  export LD_LIBRARY_PATH="$PWD/.deps/gpu-root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
start=$(date +%s)
echo "== build" | tee -a "$log"
# GPUBENCH_CHECK_BUILD_DIR: an existing build (configured already) to reuse, as a rehearsal may;
# GPUBENCH_CHECK_SKIP_BUILD=1 uses its binaries as they are (a test must not rebuild the tree
# that other tests are running from).
build="${GPUBENCH_CHECK_BUILD_DIR:-build-gpu}"
# The bundle scripts/gpu-bundle.sh built off the device (carried as .deps/gpu-bundle): no build
# here. Building stays the fallback where it is absent or a library it needs is missing.
bundle="${GPUBENCH_CHECK_BUNDLE:-.deps/gpu-bundle}"
build_gpubench() {
  if [ -z "${GPUBENCH_CHECK_BUILD_DIR:-}" ] && [ -x "$bundle/bin/gpubench" ]; then
    # shellcheck source=/dev/null
    if source "$bundle/env.sh"; then
      build="$bundle/bin"
      echo "gpu-check: gpubench from the bundle $bundle, no build"
      return 0
    fi
    echo "gpu-check: the bundle cannot run here (above); building instead"
  fi
  if [ "${GPUBENCH_CHECK_SKIP_BUILD:-0}" = 1 ]; then
    [ -x "$build/gpubench" ] || { echo "gpu-check: no $build/gpubench to use"; return 1; }
    return 0
  fi
  if [ ! -f "$build/CMakeCache.txt" ]; then
    local prefix
    prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)') || return 1
    [ ! -d .deps/gpu-root/usr ] || prefix="$prefix;$PWD/.deps/gpu-root/usr"
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_BUILD_TESTS=OFF \
      -DCMAKE_PREFIX_PATH="$prefix" || return 1
  fi
  cmake --build "$build" --target gpubench --parallel "$(nproc)"
}
build_gpubench > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
grep "^gpu-check:" "$OUT/build.log" | tee -a "$log" || true
echo "build: $(($(date +%s) - start)) s" | tee -a "$log"
"$build/gpubench" env > "$OUT/env.json"
gpu=cpu-rehearsal
[ "$DEVICE" = cpu ] || gpu=$(python3 -c 'import json, re, sys
print(re.sub(r"[^a-z0-9]+", "-", json.load(open(sys.argv[1]))["gpu_name"].lower()).strip("-"))' \
  "$OUT/env.json")
[ -n "$gpu" ] || { echo "gpu-check: no CUDA device visible to gpubench" >&2; exit 1; }
# GPUBENCH_CHECK_RESULTS: where results/gpu/ is (a rehearsal in a test writes to a scratch folder).
folder="${GPUBENCH_CHECK_RESULTS:-results/gpu}/$gpu"
mkdir -p "$folder"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
  --format=csv >> "$log" 2>&1 || true

table=""       # this stage's table file
stage_start=0
# row LABEL KIND=RESULT...: one table line (scripts/gpu_check_row.py), printed and kept.
row() {
  python3 scripts/gpu_check_row.py row "$@" | tee -a "$table"
  tar -C . -czf "$OUT/results-$gpu.tar.gz" "$folder"
}
over_budget() {
  if [ $(($(date +%s) - stage_start)) -ge "$BUDGET_S" ]; then
    echo "$1: skipped, the stage has run ${BUDGET_S} s (GPUBENCH_CHECK_BUDGET_S)" | tee -a "$table"
    return 0
  fi
  return 1
}
# gpubench_run RESULT MODE ARGS...: one gpubench train run into RESULT.
gpubench_run() {
  local result=$1 mode=$2
  shift 2
  "$build/gpubench" --log-level warn train --device "$DEVICE" --mode "$mode" "$@" --output "$result" \
    >> "$log" 2>&1 || true
}
# bench LABEL MODEL PRECISION BATCH REPEAT [PYTORCH_MODES]: gpubench eager and graph mode (image
# models), then PyTorch in each mode (eager by default; convnets only), as one table row.
bench() {
  local label=$1 model=$2 precision=$3 batch=$4 repeat=$5 pytorch_modes=${6:-eager}
  over_budget "$label" && return 0
  local common=(--warmup-steps "$WARMUP" --steps "$STEPS" --repeat "$repeat")
  [ -n "$batch" ] && common+=(--batch-size "$batch")  # empty: the model's default
  local stamp columns=()
  stamp=$(date -u +%Y-%m-%dT%H%M%S)
  echo "== $label" >> "$log"
  gpubench_run "$folder/${stamp}_${label}.json" eager --model "$model" --precision "$precision" "${common[@]}"
  columns+=("eager=$folder/${stamp}_${label}.json")
  if [ "$model" != "${model#transformerxl}" ]; then  # no graph mode, no PyTorch reference
    row "$label" "${columns[@]}"
    return 0
  fi
  if [ "$GRAPH_MODE" = 1 ]; then
    gpubench_run "$folder/${stamp}_${label}_graph.json" graph --model "$model" --precision "$precision" "${common[@]}"
    columns+=("graph=$folder/${stamp}_${label}_graph.json")
  fi
  local mode kind reference
  for mode in $pytorch_modes; do
    kind=pt; [ "$mode" = eager ] || kind="pt-$mode"
    reference="$scratch/pytorch_${label}_${mode}.json"
    python3 scripts/torch_reference.py --model "$model" --device "$DEVICE" --precision "$precision" \
      --mode "$mode" "${common[@]}" --output "$reference" >> "$log" 2>&1 || true
    columns+=("$kind=$reference")
    python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$reference" \
      >> "$OUT/pytorch.jsonl" 2>/dev/null || true
  done
  row "$label" "${columns[@]}"
}
# finetune_bench LABEL MODEL PRECISION SEQ BATCH TUNING: gpubench and Hugging Face (transformers +
# peft) on the same fine-tuning benchmark, as one table row.
finetune_bench() {
  local label=$1 model=$2 precision=$3 seq=$4 batch=$5 tuning=$6
  over_budget "$label" && return 0
  local common=(--warmup-steps "$WARMUP" --steps "$STEPS" --repeat 2 --precision "$precision"
                --seq-len "$seq" --batch-size "$batch" --tuning "$tuning")
  local stamp reference="$scratch/hf_${label}.json"
  stamp=$(date -u +%Y-%m-%dT%H%M%S)
  echo "== $label" >> "$log"
  gpubench_run "$folder/${stamp}_${label}.json" eager --model "$model" "${common[@]}"
  python3 scripts/hf_reference.py --model "$model" --device "$DEVICE" "${common[@]}" \
    --output "$reference" >> "$log" 2>&1 || true
  python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$reference" \
    >> "$OUT/huggingface.jsonl" 2>/dev/null || true
  row "$label" "eager=$folder/${stamp}_${label}.json" "pt=$reference"
}
# memory_bench LABEL MODEL PRECISION SEQ BATCH TUNING: fit's prediction (and verdicts for 48 and
# 80 GB), then the run it predicts, as one line.
memory_bench() {
  local label=$1 model=$2 precision=$3 seq=$4 batch=$5 tuning=$6
  over_budget "$label" && return 0
  local settings=(--model "$model" --precision "$precision" --seq-len "$seq" --batch-size "$batch"
                  --tuning "$tuning")
  local stamp
  stamp=$(date -u +%Y-%m-%dT%H%M%S)
  echo "== $label" >> "$log"
  "$build/gpubench" --log-level warn fit --device "$DEVICE" "${settings[@]}" --memory 48GB,80GB \
    --format json --output "$folder/${stamp}_${label}_fit.json" >> "$log" 2>&1 || true
  gpubench_run "$folder/${stamp}_${label}.json" eager "${settings[@]}" --warmup-steps 3 --steps 5 --repeat 1
  python3 scripts/gpu_check_row.py memory "$label" "$folder/${stamp}_${label}_fit.json" \
    "$folder/${stamp}_${label}.json" | tee -a "$table"
}
# Graph mode computes what eager computes: the same 20 fp32 steps from one seed, final losses.
# Deterministic: with cuDNN's autotuning the two processes could pick different algorithms.
same_losses() {
  local model=$1 batch=$2
  over_budget "graph-vs-eager losses" && return 0
  local runs=(--model "$model" --precision fp32 --batch-size "$batch" --warmup-steps 10 --steps 10 --repeat 1
              --deterministic)
  gpubench_run "$scratch/losses_eager.json" eager "${runs[@]}"
  gpubench_run "$scratch/losses_graph.json" graph "${runs[@]}"
  python3 scripts/gpu_check_row.py losses "$scratch/losses_eager.json" "$scratch/losses_graph.json" \
    | tee -a "$table" || failed_checks=$((failed_checks + 1))
}

for stage in "$@"; do
  table="$folder/check-$stage.txt"
  stage_start=$(date +%s)
  { echo "# gpubench GPU check, stage $stage, $(date -u +%FT%TZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "# $(python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); print(e["gpu_name"], "| driver", e["driver"], "| libtorch", e["libtorch"], "| CUDA", e["cuda"], "| cuDNN", e["cudnn"], "| NCCL", e["nccl"])' "$OUT/env.json")"
    echo "# warm-up $WARMUP steps, trials of $STEPS steps; PyTorch: scripts/torch_reference.py, same settings"
  } > "$table"
  [ "$stage" = smoke ] || python3 scripts/gpu_check_row.py header | tee -a "$table"
  # nvidia-smi's own view, every 500 ms, to check the results' NVML telemetry against.
  smi_sampler=""
  if [ "$DEVICE" != cpu ] && command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu,clocks_event_reasons.active \
      --format=csv -lms 500 > "$folder/nvidia-smi-$stage.csv" 2>&1 &
    smi_sampler=$!
  fi
  case "$stage" in
    smoke)
      python3 scripts/gpu_smoke.py --gpubench "$build/gpubench" --device "$DEVICE" --folder "$folder" \
        --out "$OUT" --scratch "$scratch" --table "$table" --deadline $((script_start + SMOKE_BUDGET_S)) \
        ${GPUBENCH_CHECK_SMOKE_ONLY:+--only "$GPUBENCH_CHECK_SMOKE_ONLY"} || failed_checks=$((failed_checks + 1)) ;;
    quick)
      batch="${GPUBENCH_CHECK_BATCH:-256}"
      for precision in ${GPUBENCH_CHECK_PRECISIONS:-fp32 tf32 fp16 bf16}; do
        bench "resnet50_${precision}_b$batch" resnet50 "$precision" "$batch" 3
      done
      # A torchrun-style group of one: NCCL process group and bucketed all-reduce hooks.
      group_precision="${GPUBENCH_CHECK_GROUP_PRECISION:-fp16}"
      over_budget "resnet50_${group_precision}_b${batch}_group1" || {
        # Its result stays out of $folder: report would take it for the plain run's cell.
        result="$scratch/resnet50_${group_precision}_b${batch}_group1.json"
        RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
          "$build/gpubench" --log-level warn train --model resnet50 --device "$DEVICE" --precision "$group_precision" \
          --batch-size "$batch" --warmup-steps "$WARMUP" --steps "$STEPS" --repeat 3 \
          --output "$result" >> "$log" 2>&1 || true
        row "resnet50_${group_precision}_b${batch}_group1" "eager=$result"
      } ;;
    graph)
      graph_precision=fp16
      [ "$DEVICE" = cpu ] && graph_precision=bf16
      graph_batch="${GPUBENCH_CHECK_GRAPH_BATCH:-32}"
      googlenet_batch="${GPUBENCH_CHECK_GRAPH_GOOGLENET_BATCH:-128}"
      bench "resnet50_${graph_precision}_b${graph_batch}" resnet50 "$graph_precision" "$graph_batch" 3 \
        "eager $COMPILE_MODES"
      bench "googlenet_${graph_precision}_b${googlenet_batch}" googlenet "$graph_precision" \
        "$googlenet_batch" 3 "eager $COMPILE_MODES"
      if [ "$GRAPH_MODE" = 1 ]; then same_losses resnet50 "$graph_batch"; fi ;;
    zoo|zoo-fp32)
      precision="${GPUBENCH_CHECK_ZOO_PRECISION:-fp16}"
      [ "$stage" = zoo-fp32 ] && precision=fp32
      batch="${GPUBENCH_CHECK_ZOO_BATCH:-128}"
      for model in ${GPUBENCH_CHECK_ZOO:-resnet101 resnet152 inception3 inception4 vgg16 googlenet}; do
        bench "${model}_${precision}_b$batch" "$model" "$precision" "$batch" 2
      done ;;
    lm)
      lm_precision="${GPUBENCH_CHECK_TXL_PRECISION:-fp16}"
      for model in ${GPUBENCH_CHECK_TXL:-transformerxl-base transformerxl-large}; do
        bench "${model}_${lm_precision}" "$model" "$lm_precision" "${GPUBENCH_CHECK_TXL_BATCH:-}" 2
      done
      over_budget "allreduce" || {
        "$build/gpubench" --log-level warn allreduce --device "$DEVICE" --gpus 1 -b 8 -e "${GPUBENCH_CHECK_ALLREDUCE_MAX:-256M}" \
          -o "$OUT/allreduce.json" 2>&1 | tee -a "$log" | tee -a "$table" || true
      } ;;
    finetune)
      ft_precision="${GPUBENCH_CHECK_FINETUNE_PRECISION:-bf16}"
      for entry in ${GPUBENCH_CHECK_FINETUNE:-bert-large:128:32:full llama-3-8b:2048:1:lora llama-3.2-1b:2048:1:lora}; do
        IFS=: read -r model seq batch tuning <<< "$entry"
        finetune_bench "${model}_${tuning}_${ft_precision}_s${seq}_b${batch}" "$model" "$ft_precision" \
          "$seq" "$batch" "$tuning"
      done ;;
    memory)
      for entry in ${GPUBENCH_CHECK_MEMORY:-llama-3-8b:2048:4:lora bert-large:512:16:full}; do
        IFS=: read -r model seq batch tuning <<< "$entry"
        memory_bench "${model}_${tuning}_bf16_s${seq}_b${batch}_memory" "$model" bf16 "$seq" "$batch" "$tuning"
      done
      max_model="${GPUBENCH_CHECK_MAX_MODEL:-resnet50}"
      max_precision=fp16
      [ "$DEVICE" = cpu ] && max_precision=bf16
      over_budget "${max_model}_batch_max" || {
        limit=()
        [ -n "${GPUBENCH_CHECK_MAX_LIMIT:-}" ] && limit=(--memory-limit "$GPUBENCH_CHECK_MAX_LIMIT")
        result="$folder/$(date -u +%Y-%m-%dT%H%M%S)_${max_model}_${max_precision}_bmax.json"
        gpubench_run "$result" eager --model "$max_model" --precision "$max_precision" --batch-size max \
          "${limit[@]}" --warmup-steps 3 --steps 5 --repeat 1
        python3 scripts/gpu_check_row.py memory "${max_model}_${max_precision}_batch_max" none "$result" \
          | tee -a "$table"
      } ;;
    infer)
      infer_precision=fp16
      [ "$DEVICE" = cpu ] && infer_precision=bf16
      IFS=: read -r model batches <<< "${GPUBENCH_CHECK_INFER_IMAGE:-resnet50:1,256}"
      over_budget "${model}_infer" || {
        out="$scratch/infer-image"
        mkdir -p "$out"
        "$build/gpubench" --log-level warn infer --device "$DEVICE" --model "$model" \
          --precision "$infer_precision" --batch-size "$batches" --warmup-steps "$WARMUP" \
          --steps "$STEPS" --repeat 3 --output "$out" >> "$log" 2>&1 || true
        for result in "$out"/*.json; do
          [ -e "$result" ] || continue
          cp "$result" "$folder/"
          python3 scripts/gpu_check_row.py inference "$(basename "$result" .json)" "$result" | tee -a "$table"
        done
      }
      IFS=: read -r model prompt generated batches <<< "${GPUBENCH_CHECK_INFER_LLM:-llama-3-8b:512:128:1,16}"
      over_budget "${model}_generate" || {
        out="$scratch/infer-llm"
        mkdir -p "$out"
        "$build/gpubench" --log-level warn infer --device "$DEVICE" --model "$model" --precision bf16 \
          --prompt-len "$prompt" --gen-len "$generated" --batch-size "$batches" --warmup-steps 1 \
          --steps 2 --repeat 3 --output "$out" >> "$log" 2>&1 || true
        for result in "$out"/*.json; do
          [ -e "$result" ] || continue
          cp "$result" "$folder/"
          python3 scripts/gpu_check_row.py inference "$(basename "$result" .json)" "$result" | tee -a "$table"
        done
      } ;;
  esac
  [ -z "$smi_sampler" ] || kill "$smi_sampler" 2> /dev/null || true
  echo "stage $stage: $(($(date +%s) - stage_start)) s" | tee -a "$table"
  tar -C . -czf "$OUT/results-$gpu.tar.gz" "$folder"
done
[ "$failed_checks" = 0 ] || { echo "gpu-check: $failed_checks check(s) failed" >&2; exit 1; }
