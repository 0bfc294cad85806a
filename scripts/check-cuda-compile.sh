#!/usr/bin/env bash
# Compiles every source with CUDA on against the headers of a pinned CUDA LibTorch 2.x (objects
# only, no link): CI has no GPU and Debian's LibTorch is CPU-only, so this keeps the GPU-only
# code and the 2.x API from rotting between GPU runs. Needs the CUDA toolkit (nvcc on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
torch_version="${GPUBENCH_TORCH_VERSION:-2.11.0}"
cache="${GPUBENCH_TORCH_HEADERS_CACHE:-.deps/torch-$torch_version}"
if [ ! -f "$cache/torch/include/torch/csrc/api/include/torch/torch.h" ]; then
  mkdir -p "$cache/wheel"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 -d "$cache/wheel" "torch==$torch_version"
  python3 - "$cache" <<'PY'
import sys, zipfile, glob
cache = sys.argv[1]
wheel = glob.glob(f"{cache}/wheel/torch-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    z.extractall(cache, [n for n in z.namelist() if n.startswith("torch/include/")])
PY
  rm -rf "$cache/wheel"
fi
export PATH="$PATH:/usr/local/cuda/bin"
build_dir="${GPUBENCH_CUDA_CHECK_BUILD_DIR:-build-cuda-check}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUBENCH_CUDA_COMPILE_CHECK="$PWD/$cache/torch"
cmake --build "$build_dir" --parallel "$(nproc)"
echo "check-cuda-compile: every source compiled with CUDA on against torch $torch_version headers"
