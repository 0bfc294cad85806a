#!/usr/bin/env bash
# gpubench against LibTorch 2.x at run time, on a machine without a GPU: installs the CUDA
# torch wheel that GPU nodes use into a virtual environment and builds gpubench against it, both
# through the README's setup (GPUBENCH_LIBTORCH=wheel scripts/setup.sh: every source compiled
# with CUDA and NCCL on, linked against the wheel's libraries); checks that its env says it has
# CUDA and that the README's first command on it falls back to the CPU with one line; runs the
# whole CPU test suite on that build; then runs 2-rank jobs under the wheel's own torchrun
# (static and c10d rendezvous; train and infer) and checks their result files.
# Needs the CUDA toolkit (nvcc on the PATH or in /usr/local/cuda).
# GPUBENCH_TORCH_VERSION (default 2.11.0) and GPUBENCH_TORCH2_BUILD_DIR override the defaults;
# extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${GPUBENCH_TORCH_VERSION:-2.11.0}"
venv="${GPUBENCH_DEPS_DIR:-.deps}/torch-$version-venv"  # where scripts/libtorch.sh installs it
build_dir="${GPUBENCH_TORCH2_BUILD_DIR:-build-torch2}"
export PATH="$PATH:/usr/local/cuda/bin"
elapsed() { echo "check-torch2: $1 in $(($(date +%s) - $2)) s"; }

# The README's setup as a GPU node runs it (scripts/setup.sh, GPUBENCH_LIBTORCH=wheel), pinned to
# the wheel the GPU machines have: the virtual environment, then the whole build.
start=$(date +%s)
GPUBENCH_LIBTORCH=wheel GPUBENCH_TORCH_VERSION="$version" GPUBENCH_BUILD_DIR="$build_dir" \
  GPUBENCH_CMAKE_ARGS=-DGPUBENCH_FUZZ=OFF bash scripts/setup.sh  # the fuzz targets link no LibTorch
elapsed "torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') ready, built" "$start"

# The README's first command on that build, on this machine without a GPU: env says the build has
# CUDA and why no GPU can be used; benchmark.sh says so in one line and trains on the CPU.
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
environment=$("$build_dir/gpubench" env)
grep -q "^libtorch: $version, with CUDA [0-9.]*, from .*/torch/lib$" <<<"$environment" &&
  grep -q '"libtorch_cuda": true' <<<"$environment" ||
  { echo "check-torch2: env does not show a CUDA build of LibTorch $version:"; head -3 <<<"$environment"; exit 1; }
GPUBENCH_LIBTORCH=wheel GPUBENCH_TORCH_VERSION="$version" GPUBENCH_BUILD_DIR="$build_dir" \
  bash scripts/benchmark.sh --batch-size 2 --warmup-steps 1 --steps 1 --repeat 1 --threads 1 \
  --output "$work/readme" > "$work/readme.txt" 2>&1 || { cat "$work/readme.txt"; exit 1; }
fallback=$(grep -c "^benchmark.sh: this gpubench has CUDA but .*; training on the CPU$" "$work/readme.txt" || true)
[ "$fallback" = 1 ] && "$venv/bin/python" - "$version" "$work"/readme/*.json <<'PY' || { cat "$work/readme.txt"; exit 1; }
import json, sys
result = json.load(open(sys.argv[2]))
want = {"status": "ok", "device": "cpu", "libtorch": sys.argv[1], "libtorch_cuda": True}
found = {"status": result["status"], "device": result["benchmark"]["device"],
         "libtorch": result["system"]["libtorch"], "libtorch_cuda": result["system"]["libtorch_cuda"]}
if found != want:
    sys.exit(f"check-torch2: benchmark.sh's result is {found}, expected {want}")
PY
grep "^benchmark.sh: " "$work/readme.txt"
elapsed "the CUDA build's env and benchmark.sh's fallback to the CPU checked" "$start"

start=$(date +%s)
# The whole suite: every kind of result, an fp8 run among them (LibTorch 2.x has FP8).
[ "$#" -eq 0 ] && export GPUBENCH_SCHEMA_REQUIRE_KINDS=1 GPUBENCH_SCHEMA_REQUIRE_FP8=1
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" "$@"
elapsed "CPU test suite passed" "$start"

# Two CPU ranks under torchrun, as a user of the wheel would start them: train (static and c10d
# rendezvous) and infer's replicas. Only rank 0 writes; each run's one result is checked.
start=$(date +%s)
run=(--model resnet50 --device cpu --batch-size 2 --warmup-steps 1 --steps 2 --repeat 1 --threads 1)
"$venv/bin/torchrun" --no-python --nnodes 1 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port 29531 \
  "$build_dir/gpubench" --log-level warn train "${run[@]}" --output "$work/static.json"
"$venv/bin/torchrun" --no-python --standalone --nproc-per-node 2 \
  "$build_dir/gpubench" --log-level warn train "${run[@]}" --output "$work/c10d.json"
"$venv/bin/torchrun" --no-python --standalone --nproc-per-node 2 \
  "$build_dir/gpubench" --log-level warn infer "${run[@]}" --output "$work/infer.json"
# Sharded data parallelism (--shard full) of the test Llama.
GPUBENCH_TEST_HOOKS=1 "$venv/bin/torchrun" --no-python --standalone --nproc-per-node 2 \
  "$build_dir/gpubench" --log-level warn train "${run[@]/resnet50/test-tp-llama}" --seq-len 8 \
  --shard full --output "$work/shard.json"
"$venv/bin/python" - "$version" "$work/static.json" "$work/c10d.json" "$work/infer.json" \
  "$work/shard.json" <<'PY'
import json, sys
version = sys.argv[1]
for path in sys.argv[2:]:
    result = json.load(open(path))
    d, m, b = result["distributed"], result["metrics"], result["benchmark"]
    problems = [f"{name} is {value!r}, expected {want!r}" for name, value, want in [
        ("status", result["status"], "ok"), ("world_size", d["world_size"], 2),
        ("launcher", d["launcher"], "torchrun"), ("backend", d["backend"], "gloo"),
        ("global_batch_size", b["global_batch_size"], 4),
        ("libtorch", result["system"]["libtorch"], version)]
        if value != want]
    if b.get("shard", "none") != "none" and not d["gradient_sync"].startswith("sharded"):
        problems.append(f"--shard {b['shard']} synchronised by {d['gradient_sync']!r}")
    # The throughput is global: both ranks' together (infer: the replicas' summed).
    if not m.get("throughput", 0) > 0 or abs(m["per_device_throughput"] * 2 - m["throughput"]) > 1e-6:
        problems.append(f"throughput {m.get('throughput')!r}, per device "
                        f"{m.get('per_device_throughput')!r}")
    if problems:
        sys.exit(f"check-torch2: {path}: " + "; ".join(problems))
    print(f"check-torch2: {path}: ok, {b['task']} on {d['world_size']} ranks under "
          f"{d['launcher']}, libtorch {result['system']['libtorch']}, "
          f"{m['throughput']:.2f} {m['throughput_unit']}")
PY
elapsed "train (DDP and sharded) and infer on two ranks under torchrun wrote correct results" "$start"
