#!/usr/bin/env bash
# The GPU check (docs/gpu-machines.md): tiers that are gpubench suites, configs/gpu-check/TIER.yaml,
# run by `gpubench run --skip-unavailable`, and what a suite cannot express: gpubench from the
# bundle (or a build), nvidia-smi's samples, the references, an NCCL group of one, fit, and the
# packing. Usage: scripts/gpu-check.sh TIER...
#   smoke     first, alone in one call: every CUDA path once, no references; then an NCCL group of
#             one rank, a Llama over a tensor-parallel group of one and one sharded over a group
#             of one (--shard full), an allreduce at decode's
#             sizes, one profiled step, and fit for the runs it predicts (a LoRA step and a bf16
#             generation)
#   kernels   first and fast: each own CUDA kernel against its composition (the bundle's tests),
#             then Llama 3.2 1B and 3.1 8B bf16 decode at batch 1 in graph mode
#   compare   second: gpubench beside PyTorch eager (convnets) and Hugging Face + peft (language
#             models, torchao for fp8), and gpubench scale on Llama 3 8B LoRA's timeline
#   quick, graph, zoo, zoo-fp32, lm, finetune, infer, memory: longer tiers, with references
# Results: results/gpu/<gpu>/<tier>-<time>/ (every result file, fit and scale predictions), the
# table results/gpu/<gpu>/check-<tier>.txt (scripts/gpu_check_table.py), nvidia-smi's samples,
# all packed into $OUT/results-<gpu>.tar.gz after each tier; logs in $OUT. Exit 1 when a
# benchmark or a check failed.
# GPUBENCH_CHECK_DEVICE=cpu rehearses it on a machine without a GPU (`run --rehearsal`: tiny
# models; results in the git-ignored results/gpu/cpu-rehearsal/): it checks the driver and the
# suites, not a GPU. Also: GPUBENCH_CHECK_BUNDLE (default .deps/gpu-bundle), GPUBENCH_CHECK_BUILD_DIR
# (build there instead), GPUBENCH_CHECK_SKIP_BUILD=1 (use that build as it is),
# GPUBENCH_CHECK_RESULTS (instead of results/gpu), GPUBENCH_CHECK_TIMEOUT (per benchmark, 240 s).
set -euo pipefail
cd "$(dirname "$0")/.."
export GPUBENCH_TEST_HOOKS=1  # the rehearsal's tiny models
[ $# -gt 0 ] || { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
tiers=$(cd configs/gpu-check && ls ./*.yaml | sed 's|^\./||; s|\.yaml$||' | tr '\n' ' ')
for tier in "$@"; do
  [ -f "configs/gpu-check/$tier.yaml" ] || { echo "gpu-check: unknown tier '$tier'; tiers: $tiers" >&2; exit 2; }
done
OUT="${OUT:-/tmp/gpubench-gpu-check}"
DEVICE="${GPUBENCH_CHECK_DEVICE:-cuda}"
TIMEOUT="${GPUBENCH_CHECK_TIMEOUT:-240}"
mkdir -p "$OUT"
log="$OUT/gpu-check.log"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

start=$(date +%s)
build="${GPUBENCH_CHECK_BUILD_DIR:-build-gpu}"
bundle="${GPUBENCH_CHECK_BUNDLE:-.deps/gpu-bundle}"
build_gpubench() {  # the bundle (scripts/gpu-bundle.sh) where it runs here; else the plain build
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
[ ! -d .deps/gpu-root/usr ] || export LD_LIBRARY_PATH="$PWD/.deps/gpu-root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
build_gpubench > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
grep "^gpu-check:" "$OUT/build.log" | tee -a "$log" || true
echo "start-up: $(($(date +%s) - start)) s" | tee -a "$log"
gb="$build/gpubench"
"$gb" env --format json > "$OUT/env.json"
gpu=cpu-rehearsal
[ "$DEVICE" = cpu ] || gpu=$(python3 -c 'import json, re, sys
print(re.sub(r"[^a-z0-9]+", "-", json.load(open(sys.argv[1]))["gpu_name"].lower()).strip("-"))' "$OUT/env.json")
[ -n "$gpu" ] || { echo "gpu-check: no CUDA device visible to gpubench" >&2; exit 1; }
folder="${GPUBENCH_CHECK_RESULTS:-results/gpu}/$gpu"
mkdir -p "$folder"
rehearse=()
[ "$DEVICE" = cpu ] && rehearse=(--rehearsal)
small() { [ "$DEVICE" = cpu ] && echo "$1" || echo "$2"; }  # small CPU_VALUE GPU_VALUE
failed=0

# What a suite cannot express: one train run given its own environment or outputs.
extra_train() {  # extra_train RESULT [ENV=VALUE...] -- ARGS...
  local result=$1 environment=()
  shift
  while [ "$1" != -- ]; do environment+=("$1"); shift; done
  shift
  env "${environment[@]}" "$gb" --log-level warn train "$@" --output "$result" >> "$log" 2>&1 || true
}
smoke_extras() {  # the NCCL group of one, a profiled step, fit for the run it predicts
  local run_dir=$1 model half
  model=$(small test-tiny-cnn resnet50); half=$(small bf16 fp16)
  extra_train "$run_dir/extra-nccl-group-of-one.json" RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 \
    LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 -- --device "$DEVICE" --model "$model" \
    --precision bf16 --batch-size "$(small 2 128)" --warmup-steps 3 --steps 3 --repeat 1
  # A launcher's world of one shards a Llama over a tensor-parallel group of one: the sharded
  # path's NCCL all-reduces, as one GPU can show them.
  extra_train "$run_dir/extra-tensor-parallel-group-of-one.json" RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 \
    LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29518 -- --device "$DEVICE" \
    --model "$(small test-tp-llama llama-3.2-1b)" --tuning lora --precision bf16 \
    --batch-size "$(small 2 4)" --seq-len "$(small 16 512)" --warmup-steps 3 --steps 3 --repeat 1
  # A sharded run of one rank (--shard full over its own NCCL group of one): the gathers into
  # freed storage, the reduce-scatter and the master shards on a GPU.
  extra_train "$run_dir/extra-sharded-group-of-one.json" -- --device "$DEVICE" \
    --model "$(small test-tp-llama llama-3.2-1b)" --shard full --precision bf16 \
    --batch-size "$(small 2 4)" --seq-len "$(small 16 512)" --warmup-steps 3 --steps 3 --repeat 1
  "$gb" --log-level warn allreduce --device "$DEVICE" --gpus 1 -b 8K -e 1M \
    -o "$run_dir/allreduce-decode-sizes.json" >> "$log" 2>&1 || echo "allreduce failed" >> "$scratch/extras.txt"
  extra_train "$scratch/profiled.json" -- --device "$DEVICE" --model "$model" --precision "$half" \
    --batch-size "$(small 2 256)" --warmup-steps 3 --steps 1 --repeat 1 --profile "$scratch/trace.json"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); p = r.get("profile", {})
print("profiled step:", r["status"], p.get("profiler"), p.get("steps"), "step(s), trace", "written" if p.get("trace") else "missing")' \
    "$scratch/profiled.json" >> "$scratch/extras.txt" 2>&1 || echo "profiled step: no result" >> "$scratch/extras.txt"
  fit_for "$run_dir" "$(small test-tiny-llama llama-3.2-1b)" lora "$(small 32 1024)"
  fit_for "$run_dir" "$(small test-tiny-llama llama-3.2-1b)" infer bf16
}
# fit_for RUN_DIR [MODEL TUNING SEQ]: fit beside each eager fixed-batch train run (that one); with
# TUNING infer and SEQ a precision, fit --task infer beside that eager generation.
fit_for() {
  local run_dir=$1 result
  shift
  while read -r result; do
    mapfile -t fit_settings < <(python3 scripts/gpu_check_table.py fit-settings "$result")
    "$gb" --log-level warn fit "${fit_settings[@]}" --memory 48GB,80GB --format json \
      --output "$run_dir/fit-$(basename "$result")" < /dev/null >> "$log" 2>&1 || true
  done < <(python3 scripts/gpu_check_table.py select fit "$run_dir" "$@")
}
# Kernels a decoded token launches (eager, bf16, batch 1): two profiled generations 8 tokens
# apart; the census of DecodeStep.LaunchesAtMostItsBudgetPerLayer, checked on the device.
decode_extras() {
  local n
  for n in 8 16; do
    "$gb" --log-level warn infer --device "$DEVICE" --model "$(small test-tiny-llama llama-3.1-8b)" \
      --precision bf16 --batch-size 1 --prompt-len "$(small 16 512)" --gen-len "$n" \
      --warmup-steps 1 --steps 1 --repeat 1 --profile "$scratch/decode-$n-trace.json" \
      --output "$scratch/decode-$n.json" >> "$log" 2>&1 || true
  done
  python3 scripts/kernels_per_token.py "$scratch/decode-8-trace.json" "$scratch/decode-16-trace.json" \
    --tokens 8 >> "$scratch/extras.txt" 2>> "$log" || echo "kernels per token failed" >> "$scratch/extras.txt"
}
# Each own CUDA kernel against its composition on the device, from the tests that go with
# gpubench (the bundle's bin/gpubench_tests, or a build's tests/); on the CPU they skip.
kernels_extras() {
  local tests="" candidate
  for candidate in "$build/gpubench_tests" "$build/tests/gpubench_tests"; do
    [ -x "$candidate" ] && { tests=$candidate; break; }
  done
  [ -n "$tests" ] || { echo "own kernels failed: no gpubench_tests beside $gb" >> "$scratch/extras.txt"; return 0; }
  if "$tests" --gtest_filter='FusedOperators.*:DecodeStep.*' > "$scratch/kernels-tests.txt" 2>&1; then
    echo "own kernels: $(grep -c '^\[       OK \]' "$scratch/kernels-tests.txt") passed," \
      "$(grep -c '^\[  SKIPPED \] .* ms)$' "$scratch/kernels-tests.txt") skipped" \
      "($(grep -h '^decode step: ' "$scratch/kernels-tests.txt"))" >> "$scratch/extras.txt"
    local skipped
    skipped=$(grep -A2 '^\[ RUN      \] FusedOperators.Cuda' "$scratch/kernels-tests.txt" | sed -n '2{/Skipped$/!q};3p')
    [ -z "$skipped" ] || echo "own kernels: the CUDA comparison skipped: $skipped" >> "$scratch/extras.txt"
  else
    { echo "own kernels failed:"; grep -B3 '^\[  FAILED  \]' "$scratch/kernels-tests.txt" | head -20; } >> "$scratch/extras.txt"
  fi
  cat "$scratch/kernels-tests.txt" >> "$log"
  # Each own kernel's duration and DRAM bytes, caches flushed before each launch (ncu's
  # default), on the CUDA comparisons' shapes; parsed on the CPU machine (scripts/ncu_kernels.py).
  if command -v ncu > /dev/null && [ "$DEVICE" != cpu ]; then
    if timeout 120 ncu --csv --print-units base --print-kernel-base function --clock-control none \
         --kernel-name 'regex:fp8_weight_rows|attend_splits|join_splits|rms_norm_rows|silu_mul_elements|rotary_cache_write_heads|amax_of_blocks|cast_tensor|cast_rows' \
         --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
         "$tests" --gtest_filter='FusedOperators.Cuda*' > "$folder/ncu-kernels.csv" 2>> "$log"; then
      echo "own kernels' ncu readings: ncu-kernels.csv (scripts/ncu_kernels.py tables them)" >> "$scratch/extras.txt"
    else
      echo "own kernels' ncu readings: ncu did not finish (log)" >> "$scratch/extras.txt"
    fi
  fi
}
compare_extras() {  # scale on Llama 3 8B LoRA's timeline; one profiled ResNet-50 step each side
  local run_dir=$1 result model half
  model=$(small test-tiny-cnn resnet50); half=$(small bf16 fp16)
  local steps=(--precision "$half" --batch-size "$(small 2 256)" --warmup-steps 3 --steps 1 --repeat 1)
  extra_train "$scratch/profiled.json" -- --device "$DEVICE" --model "$model" "${steps[@]}" \
    --profile "$scratch/ours-trace.json"
  if python3 scripts/torch_reference.py --model "$model" --device "$DEVICE" "${steps[@]}" \
       --profile "$scratch/pytorch-trace.json" --output "$scratch/pytorch-profiled.json" >> "$log" 2>&1; then
    python3 scripts/profile_diff.py "$scratch/ours-trace.json" "$scratch/pytorch-trace.json" --top 25 \
      --output "$folder/check-profile-$model.md" >> "$log" 2>&1 && echo "profile table: check-profile-$model.md" \
      >> "$scratch/extras.txt" || echo "profile table failed" >> "$scratch/extras.txt"
  else
    echo "profile table: skipped, PyTorch's profiled step did not run (torch_reference.py; log)" >> "$scratch/extras.txt"
  fi
  while read -r result; do
    "$gb" --log-level warn scale "$result" --fabric L40S --fabric A100-80GB-SXM --gpus 8 -f json \
      -o "$run_dir/scale-$(basename "$result")" < /dev/null >> "$log" 2>&1 || echo "scale failed" >> "$scratch/extras.txt"
  done < <(python3 scripts/gpu_check_table.py select scale "$run_dir")
}

# The README's first command (scripts/benchmark.sh) as a lab would run it, on this gpubench (the
# bundle's, without setup): ahead of the smoke tier. Its table says which LibTorch and device it
# used (gpubench env's first lines) and its figure; its result goes with the tier's.
readme_first_command() {
  local run_dir table="$folder/check-readme.txt" shorter=()
  run_dir="$folder/readme-$(date -u +%Y-%m-%dT%H%M%S)"
  mkdir -p "$run_dir"
  # The rehearsal only checks the path: one short step instead of the CPU's three trials of 8.
  [ "$DEVICE" = cpu ] && shorter=(--batch-size 2 --warmup-steps 1 --steps 1 --repeat 1 --threads 1)
  { echo "# gpubench GPU check, the README's first command, $(date -u +%FT%TZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if GPUBENCH_BINARY="$gb" bash scripts/benchmark.sh "${shorter[@]}" --output "$run_dir" > "$scratch/readme.txt" 2>&1; then
      echo "# status: ok"
    else
      echo "# gpu-check: the README's first command failed"
    fi
    grep "^benchmark.sh: \|^resnet50 \|^model \|^result: " "$scratch/readme.txt" || tail -5 "$scratch/readme.txt"
  } > "$table"
  cat "$table" | tee -a "$log"
  grep -q "^# gpu-check: the README's first command failed" "$table" && failed=$((failed + 1))
  return 0
}
[[ " $* " != *" smoke "* ]] || readme_first_command

for tier in "$@"; do
  tier_start=$(date +%s)
  run_dir="$folder/$tier-$(date -u +%Y-%m-%dT%H%M%S)"
  table="$folder/check-$tier.txt"
  : > "$scratch/extras.txt"
  sampler=""
  if [ "$DEVICE" != cpu ] && command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu,clocks_event_reasons.active \
      --format=csv -lms 500 > "$folder/nvidia-smi-$tier.csv" 2>&1 &
    sampler=$!
  fi
  echo "== $tier: gpubench run configs/gpu-check/$tier.yaml ${rehearse[*]}" | tee -a "$log"
  "$gb" --log-level warn run "configs/gpu-check/$tier.yaml" "${rehearse[@]}" --skip-unavailable \
    --timeout "$TIMEOUT" --output "$run_dir" >> "$log" 2>&1 || true
  case "$tier" in
    smoke) smoke_extras "$run_dir" ;;
    memory) fit_for "$run_dir" ;;
    compare) compare_extras "$run_dir" ;;
    decode) decode_extras ;;
    kernels) kernels_extras ;;
    lm) "$gb" --log-level warn allreduce --device "$DEVICE" --gpus 1 -b 8 -e "$(small 1M 256M)" \
          -o "$run_dir/allreduce.json" >> "$scratch/extras.txt" 2>&1 || echo "allreduce failed" >> "$scratch/extras.txt" ;;
  esac
  if [ "$tier" != smoke ]; then
    modes=eager
    [ "$tier" = graph ] && [ "$DEVICE" != cpu ] && modes="eager compile reduce-overhead"
    python3 scripts/gpu_check_table.py references "$run_dir" "$scratch/refs-$tier" --device "$DEVICE" \
      --modes "$modes" >> "$log" 2>&1 || true
  fi
  [ -z "$sampler" ] || kill "$sampler" 2> /dev/null || true
  { echo "# gpubench GPU check, tier $tier, $(date -u +%FT%TZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); print("#", e["gpu_name"], "| driver", e["driver"], "| libtorch", e["libtorch"], "| CUDA", e["cuda"], "| cuDNN", e["cudnn"], "| NCCL", e["nccl"])' "$OUT/env.json"
    python3 scripts/gpu_check_table.py table "$run_dir" --refs "$scratch/refs-$tier" --device "$DEVICE" \
      --smi "$folder/nvidia-smi-$tier.csv" || echo "gpu-check: tier $tier failed" >> "$scratch/extras.txt"
    sed 's/^/# /' "$scratch/extras.txt"
    echo "# tier $tier: $(($(date +%s) - tier_start)) s"
  } > "$table"
  cat "$table"
  grep -q "^# gpu-check: tier $tier failed\|^# profiled step: \(failed\|no result\)\|^# \(scale\|allreduce\|profile table\|kernels per token\|own kernels\) failed" "$table" && failed=$((failed + 1))
  tar -C . -czf "$OUT/results-$gpu.tar.gz" "$folder"
done
[ "$failed" = 0 ] || { echo "gpu-check: $failed tier(s) failed" >&2; exit 1; }
