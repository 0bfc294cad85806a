#!/usr/bin/env bash
# Builds gpubench against the CUDA LibTorch of the local torch Python package and runs the GPU
# checks through gpubench and through PyTorch (scripts/torch_reference.py), then prints both side
# by side with their ratio: ResNet-50 in fp32, tf32, fp16 and bf16 (batch 256, 3 trials), then
# the rest of the convnet zoo in fp16 (batch 128, 2 trials), Transformer-XL, then the NCCL path on
# the one GPU: an all-reduce sweep and ResNet-50 fp16 as a torchrun-style group of one rank (NCCL
# process group, bucketed gradient all-reduce) next to the plain run. One GPU cannot show scaling.
# GPUBENCH_CHECK_* override the sizes.
# Needs: an NVIDIA GPU, python3 with torch and torchvision, cmake, ninja, and the Debian
# dependencies unpacked by scripts/fetch-gpu-deps.sh into .deps/gpu-root (carried there).
# Logs and results go to $OUT (default /tmp/gpubench-gpu-check).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/gpubench-gpu-check}"
mkdir -p "$OUT"
BATCH="${GPUBENCH_CHECK_BATCH:-256}"
WARMUP="${GPUBENCH_CHECK_WARMUP:-10}"
STEPS="${GPUBENCH_CHECK_STEPS:-30}"
REPEAT="${GPUBENCH_CHECK_REPEAT:-3}"
PRECISIONS="${GPUBENCH_CHECK_PRECISIONS:-fp32 tf32 fp16 bf16}"
ZOO="${GPUBENCH_CHECK_ZOO:-resnet101 resnet152 inception3 inception4 vgg16 googlenet}"
ZOO_PRECISION="${GPUBENCH_CHECK_ZOO_PRECISION:-fp16}"
ZOO_BATCH="${GPUBENCH_CHECK_ZOO_BATCH:-128}"
TXL="${GPUBENCH_CHECK_TXL:-transformerxl-base transformerxl-large}"
TXL_PRECISION="${GPUBENCH_CHECK_TXL_PRECISION:-fp16}"
deps="$PWD/.deps/gpu-root/usr"
[ -d "$deps" ] || { echo "gpu-check: $deps missing: run scripts/fetch-gpu-deps.sh where apt works, then carry .deps" >&2; exit 2; }

torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
# libtorch_cuda needs the CUDA libraries of the nvidia-* wheels (cuDNN, cuSPARSELt, NVSHMEM, ...);
# the linker must see them to resolve libtorch_cuda's own references.
nvidia_libs=$(python3 -c 'import glob, os, torch
site = os.path.dirname(os.path.dirname(torch.__file__))
print(":".join(sorted(glob.glob(os.path.join(site, "nvidia", "**", "lib"), recursive=True))))')
export LD_LIBRARY_PATH="$deps/lib/x86_64-linux-gnu:$torch_lib:$nvidia_libs:${LD_LIBRARY_PATH:-}"

# nccl.h for c10d's ProcessGroupNCCL: the nvidia-nccl wheel torch depends on, or the toolkit's.
nccl_include=$(python3 -c 'import glob, os, torch
site = os.path.dirname(os.path.dirname(torch.__file__))
found = glob.glob(os.path.join(site, "nvidia", "**", "include", "nccl.h"), recursive=True)
found += glob.glob("/usr/local/cuda*/include/nccl.h") + glob.glob("/usr/include/nccl.h")
print(os.path.dirname(found[0]) if found else "")')
echo "== build" | tee "$OUT/gpu-check.log"
start=$(date +%s)
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$deps" -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$nvidia_libs" \
    -DGPUBENCH_NCCL_INCLUDE_DIR="$nccl_include" \
  && cmake --build build-gpu --parallel "$(nproc)"; } > "$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s" | tee -a "$OUT/gpu-check.log"
build-gpu/gpubench env | tee "$OUT/env.json"

mkdir -p "$OUT/results"
# check MODEL PRECISION BATCH REPEAT: one gpubench run and one PyTorch run of the same thing.
check() {
  local model=$1 precision=$2 args=(--batch-size "$3" --warmup-steps "$WARMUP" --steps "$STEPS" --repeat "$4")
  echo "== $model $precision" | tee -a "$OUT/gpu-check.log"
  build-gpu/gpubench --log-level warn train --model "$model" --device cuda --precision "$precision" \
    "${args[@]}" --output "$OUT/results/gpubench_${model}_$precision.json" 2>&1 | tee -a "$OUT/gpu-check.log" || true
  python3 scripts/torch_reference.py --model "$model" --precision "$precision" "${args[@]}" \
    --output "$OUT/results/torch_${model}_$precision.json" 2>&1 | tee -a "$OUT/gpu-check.log" || true
}
for precision in $PRECISIONS; do check resnet50 "$precision" "$BATCH" "$REPEAT"; done
for model in $ZOO; do check "$model" "$ZOO_PRECISION" "$ZOO_BATCH" 2; done
# Transformer-XL: gpubench only (no PyTorch reference here: NVIDIA's model code is not on the
# machine), at NVIDIA's per-GPU batches; the table shows tokens/sec with no ratio.
for model in $TXL; do
  echo "== $model $TXL_PRECISION" | tee -a "$OUT/gpu-check.log"
  build-gpu/gpubench --log-level warn train --model "$model" --device cuda --precision "$TXL_PRECISION" \
    --warmup-steps "$WARMUP" --steps "$STEPS" --repeat 2 \
    --output "$OUT/results/gpubench_${model}_$TXL_PRECISION.json" 2>&1 | tee -a "$OUT/gpu-check.log" || true
done

# The NCCL path on one GPU: process group, bucketed all-reduce hooks, exposed communication.
echo "== allreduce (NCCL, 1 rank)" | tee -a "$OUT/gpu-check.log"
build-gpu/gpubench --log-level warn allreduce --device cuda --gpus 1 -b 8 -e 256M \
  -o "$OUT/allreduce.json" 2>&1 | tee -a "$OUT/gpu-check.log" || true
echo "== resnet50 fp16 as a group of one rank (NCCL)" | tee -a "$OUT/gpu-check.log"
RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
  build-gpu/gpubench --log-level warn train --model resnet50 --device cuda --precision fp16 \
  --batch-size "$BATCH" --warmup-steps "$WARMUP" --steps "$STEPS" --repeat "$REPEAT" \
  --output "$OUT/results/gpubench_resnet50-nccl1_fp16.json" 2>&1 | tee -a "$OUT/gpu-check.log" || true

python3 - "$OUT/results" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
folder = sys.argv[1]
def load(name):
    path = os.path.join(folder, name)
    return json.load(open(path)) if os.path.exists(path) else None
print(f"{'model':19} {'precision':9} {'gpubench /s':>12} {'pytorch /s':>11} {'ratio':>6}  gpubench status")
runs = sorted(os.path.basename(f)[len("gpubench_"):-len(".json")] for f in glob.glob(f"{folder}/gpubench_*.json"))
for run in runs:
    m, p = run.rsplit("_", 1)
    g, t = load(f"gpubench_{run}.json"), load(f"torch_{run}.json")
    gt = g["metrics"]["throughput"] if g and g["status"] == "ok" else None
    tt = t["throughput"] if t else None
    ratio = f"{gt / tt:6.3f}" if gt and tt else "     -"
    status = g["status"] + (": " + g.get("error", "") if g["status"] != "ok" else "") if g else "missing"
    extra = ""
    if g and g.get("distributed", {}).get("backend") not in (None, "none"):
        d = g["distributed"]
        extra = f"  [{d['backend']} x{d['world_size']}, {d['buckets']} buckets, exposed comm {d['exposed_communication_ms']:.2f} ms/step]"
    print(f"{m:19} {p:9} {gt or 0:12.1f} {tt or 0:11.1f} {ratio}  {status}{extra}")
PY
# At most 8 files come back from a device run: pack the per-run results into one.
tar -C "$OUT" -czf "$OUT/results.tar.gz" results && rm -rf "$OUT/results"
