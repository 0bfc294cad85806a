#!/usr/bin/env bash
# CTest: tiers of the GPU check (smoke, kernels, compare, decode: the smoke-sized ones) rehearsed on the CPU
# (GPUBENCH_CHECK_DEVICE=cpu: the same suites through `gpubench run --rehearsal`, and the
# driver's extras) with the build under test, into a scratch folder. It fails where the driver or
# a tier does: an entry that failed, one skipped for anything but a CUDA device or a LibTorch
# without FP8, a check that failed (fit against the run, the profiled step), or a tier whose
# table is missing. It checks the driver and the suites, not a GPU.
# Usage: gpu_check_rehearsal.sh SOURCE_DIR BUILD_DIR TIER...
set -euo pipefail
source_dir=$1 build_dir=$2
shift 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$source_dir"
OUT="$scratch/out" GPUBENCH_CHECK_DEVICE=cpu GPUBENCH_CHECK_BUILD_DIR="$build_dir" \
  GPUBENCH_CHECK_SKIP_BUILD=1 GPUBENCH_CHECK_RESULTS="$scratch/results" \
  bash scripts/gpu-check.sh "$@"
tables="$scratch/results/cpu-rehearsal"
for tier in "$@"; do
  grep -q "^# [0-9]* rows; 0 failed$" "$tables/check-$tier.txt" ||
    { echo "no clean table for $tier" >&2; exit 1; }
done
[ -s "$scratch/out/results-cpu-rehearsal.tar.gz" ]
# What the CPU can run, ran: the smoke's eager training, inference, batch search and the group.
if [ -e "$tables/check-smoke.txt" ]; then
  # The README's first command ran first, saying which LibTorch and device it used.
  grep -q "^# status: ok$" "$tables/check-readme.txt"
  grep -q "^benchmark.sh: libtorch: " "$tables/check-readme.txt"
  grep -q "^benchmark.sh: gpus: " "$tables/check-readme.txt"
  grep -q "^result: .*/readme-.*/resnet50_fp32_cpux1_bs2_.*\.json$" "$tables/check-readme.txt"
  grep -q "gloo-group-of-1 eager *ok" "$tables/check-smoke.txt"
  grep -q "shard-full gloo-group-of-1 eager *ok" "$tables/check-smoke.txt"
  grep -q "^fit then the run: .* ok " "$tables/check-smoke.txt"
  # Both detectors trained: Mask R-CNN through torchvision's NMS and RoIAlign.
  grep -q "^test-tiny-ssd bf16 b2 eager *ok" "$tables/check-smoke.txt"
  grep -q "^test-tiny-maskrcnn fp32 b2 eager *ok" "$tables/check-smoke.txt"
fi
if [ -e "$tables/check-decode.txt" ]; then
  # The decode tier's bf16 entries ran, each with its ceiling (the CPU's measured copy) ...
  grep -q "test-tiny-llama bf16 infer b1 p16 eager *ok .*% of the .* tokens/sec ceiling" \
    "$tables/check-decode.txt"
  # ... and gpt-oss's stand-in, MXFP4 experts, with its prefill, its experts' load and its ceiling.
  grep -q "test-tiny-gpt-oss bf16 infer b1 p16 mxfp4 eager *ok .*prefill .* tokens/sec; expert load .*% of the .* tokens/sec ceiling" \
    "$tables/check-decode.txt"
  # ... and the two profiled generations whose kernels a GPU counts (none in a CPU trace).
  grep -q "^# kernels per decoded token: none in the traces" "$tables/check-decode.txt"
fi
if [ -e "$tables/check-kernels.txt" ]; then
  # The own kernels' tests ran (their CUDA comparison skipped, said so), then the decode rows.
  grep -q "^# own kernels: [0-9]* passed, [0-9]* skipped (decode step: [0-9]* launches a layer" \
    "$tables/check-kernels.txt"
  grep -q "^# own kernels: the CUDA comparison skipped: no CUDA device" "$tables/check-kernels.txt"
  grep -q "test-deep-llama bf16 infer b1 p16 eager *ok" "$tables/check-kernels.txt"
fi
echo "gpu-check rehearsal: $* ran clean"
