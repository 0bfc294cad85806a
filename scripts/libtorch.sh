#!/usr/bin/env bash
# Which LibTorch this machine builds gpubench against (scripts/setup.sh asks it; docs/gpu-machines.md).
#   libtorch.sh kind     prints debian, wheel or path: GPUBENCH_LIBTORCH where set, else wheel when
#                        an NVIDIA driver answers (nvidia-smi, or /proc/driver/nvidia) and debian
#                        without one
#   libtorch.sh prefix   prints the CMake prefix of that LibTorch ("" for Debian's, which CMake
#                        finds by itself), making it available first: for wheel, a torch with CUDA
#                        in the python3 on PATH, else the torch wheel (and torchvision) from PyPI in
#                        .deps/torch-VERSION-venv, VERSION being GPUBENCH_TORCH_VERSION or the newest
#                        whose CUDA the driver supports
#   libtorch.sh wheel-version   prints the torch version prefix would install for this driver
#   libtorch.sh record PREFIX   prints one line naming the LibTorch at PREFIX
#   libtorch.sh build-folder DIR PREFIX   keeps the build folder DIR when its record (DIR/libtorch.txt,
#                        or its CMake cache's Torch_DIR) names that LibTorch, else empties it for a
#                        clean rebuild; then records it there
# Each decision is one line on stderr. Exit 2 for a bad GPUBENCH_LIBTORCH, 1 when the wheel
# cannot be had (no network: the line names what was tried and the override).
# GPUBENCH_NVIDIA_PROC (default /proc/driver/nvidia) and GPUBENCH_DEPS_DIR (default .deps) name
# where the driver's files and the project's virtual environments are.
set -euo pipefail
cd "$(dirname "$0")/.."

nvidia_proc="${GPUBENCH_NVIDIA_PROC:-/proc/driver/nvidia}"
deps="${GPUBENCH_DEPS_DIR:-.deps}"
say() { echo "setup: $*" >&2; }

# The CUDA version the driver supports: nvidia-smi's header says it; without nvidia-smi, the
# driver's version maps to it by NVIDIA's table of each toolkit's least driver (CUDA toolkit
# release notes, table 3).
driver_cuda() {
  local text version
  if text=$(nvidia-smi 2>/dev/null); then
    version=$(sed -n 's/.*CUDA Version: *\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' <<<"$text" | head -1)
    if [ -n "$version" ]; then echo "$version"; return; fi
  fi
  [ -r "$nvidia_proc/version" ] || return 0
  version=$(sed -n 's/.*Kernel Module[^0-9]*\([0-9][0-9]*\.[0-9.]*\).*/\1/p' "$nvidia_proc/version" | head -1)
  [ -n "$version" ] || return 0
  local least
  while read -r least cuda; do
    if [ "$(printf '%s\n%s\n' "$least" "$version" | sort -V | head -1)" = "$least" ]; then
      echo "$cuda"
      return
    fi
  done <<'TABLE'
580.65.06 13.0
575.51.03 12.9
570.26 12.8
560.28.03 12.6
555.42.02 12.5
550.54.14 12.4
545.23.06 12.3
535.54.03 12.2
530.30.02 12.1
525.60.13 12.0
520.61.05 11.8
TABLE
}

gpu_present() {
  nvidia-smi -L >/dev/null 2>&1 || [ -d "$nvidia_proc" ]
}

no_libtorch_there() {
  say "GPUBENCH_LIBTORCH=$(printf '%q' "$GPUBENCH_LIBTORCH" | cut -c1-120) holds no LibTorch (no Torch/TorchConfig.cmake in it, its share/cmake or torch/share/cmake); set it to debian, wheel or a LibTorch folder"
  exit 2
}

kind() {
  if [ -z "${GPUBENCH_LIBTORCH+set}" ]; then
    if gpu_present; then echo wheel; else echo debian; fi
    return
  fi
  case "$GPUBENCH_LIBTORCH" in
    debian | wheel) echo "$GPUBENCH_LIBTORCH" ;;
    /*)
      cmake_prefix_in "$GPUBENCH_LIBTORCH" >/dev/null || no_libtorch_there
      echo path
      ;;
    *)
      say "GPUBENCH_LIBTORCH=$(printf '%q' "$GPUBENCH_LIBTORCH" | cut -c1-80) is not debian, wheel or an absolute path to a LibTorch folder (unset it to choose by the machine)"
      exit 2
      ;;
  esac
}

# The folder under `root` that holds Torch/TorchConfig.cmake: a LibTorch archive's share/cmake,
# a torch package's share/cmake, or the folder itself.
cmake_prefix_in() {
  local root="$1" candidate
  for candidate in "$root" "$root/share/cmake" "$root/torch/share/cmake"; do
    if [ -f "$candidate/Torch/TorchConfig.cmake" ]; then
      (cd "$candidate" && pwd)
      return
    fi
  done
  return 1
}

torch_version_at() {
  sed -n 's/^ *set(PACKAGE_VERSION "\([^"]*\)").*/\1/p' "$1/Torch/TorchConfigVersion.cmake" 2>/dev/null | head -1
}

# "13.0" for a torch wheel whose metadata requires cuda-toolkit==13.0.x or nvidia-cuda-runtime-cu12==12.4.x;
# nothing for a wheel without CUDA.
wheel_cuda() {
  local pip="$1" version="$2"
  "$pip" install --dry-run --no-deps --ignore-installed --quiet --report - "torch==$version" 2>/dev/null |
    "$(dirname "$pip")/python" -c '
import json, re, sys
report = json.load(sys.stdin)
for item in report.get("install", []):
    for requirement in item["metadata"].get("requires_dist", []):
        found = re.match(r"(cuda-toolkit|nvidia-cuda-runtime(-cu\d+)?)\b[^=;]*==\s*(\d+)\.(\d+)", requirement)
        if found:
            print(f"{found.group(3)}.{found.group(4)}")
            sys.exit()'
}

cuda_at_most() {  # cuda_at_most 12.8 13.0: 12.8 <= 13.0
  [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]
}

no_wheel() {
  say "$1; set GPUBENCH_LIBTORCH=/path/to/libtorch (a LibTorch with CUDA), or GPUBENCH_LIBTORCH=debian to build for the CPU"
  exit 1
}

# The newest torch (2.0 or later) on PyPI whose wheel's CUDA the driver supports (the newest,
# without a driver). PyPI's wheels raise their CUDA with their version, so a binary search over
# the versions reads a handful of wheels' metadata, not all.
choose_wheel_version() {
  local cuda="$1" index_venv="$deps/pip-venv" listing version
  [ -x "$index_venv/bin/pip" ] || python3 -m venv "$index_venv" >&2 ||
    no_wheel "cannot make a virtual environment (python3 -m venv $index_venv) to install the torch wheel"
  listing=$("$index_venv/bin/pip" index versions torch 2>&1) ||
    no_wheel "cannot list the torch wheels on PyPI (pip index versions torch: $(tail -1 <<<"$listing" | cut -c1-120))"
  local versions=()
  for version in $(sed -n 's/^Available versions: //p' <<<"$listing" | tr -d ','); do
    cuda_at_most 2.0 "$version" && versions+=("$version")
  done
  [ "${#versions[@]}" -gt 0 ] || no_wheel "pip index versions torch listed no torch 2.x for this python3"
  # versions[] is newest first: find the first whose wheel's CUDA the driver runs.
  local low=0 high=${#versions[@]} middle wheel chosen="" chosen_cuda=""
  while [ "$low" -lt "$high" ]; do
    middle=$(((low + high) / 2))
    [ "$low" -eq 0 ] && [ "$high" -eq "${#versions[@]}" ] && middle=0  # the newest first
    wheel=$(wheel_cuda "$index_venv/bin/pip" "${versions[$middle]}")
    if [ -n "$wheel" ] && { [ -z "$cuda" ] || cuda_at_most "$wheel" "$cuda"; }; then
      chosen=${versions[$middle]} chosen_cuda=$wheel high=$middle
    else
      low=$((middle + 1))
    fi
  done
  [ -n "$chosen" ] || no_wheel "no torch wheel on PyPI is built for a CUDA the driver supports (CUDA ${cuda:-unknown})"
  if [ -n "$cuda" ]; then
    say "torch $chosen chosen: its wheel is built with CUDA $chosen_cuda, the newest on PyPI that the driver's CUDA $cuda runs"
  else
    say "torch $chosen chosen: the newest on PyPI (CUDA $chosen_cuda); no driver here to run it, the build still has CUDA"
  fi
  echo "$chosen"
}

wheel_prefix() {
  local python="${GPUBENCH_PYTHON:-python3}" prefix version venv
  if [ -z "${GPUBENCH_TORCH_VERSION-}" ] &&
    prefix=$("$python" -c 'import torch; assert torch.version.cuda; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
    say "LibTorch: the torch $("$python" -c 'import torch; print(torch.__version__)') with CUDA of $(command -v "$python") ($prefix)"
    "$python" -c 'import torchvision' 2>/dev/null ||
      say "that python3 has no torchvision: the detection models (ssd300, maskrcnn) will refuse to run"
    echo "$prefix"
    return
  fi
  version="${GPUBENCH_TORCH_VERSION:-$(choose_wheel_version "$(driver_cuda)")}"
  venv="$deps/torch-$version-venv"
  if ! "$venv/bin/python" -c "import torch, torchvision, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null; then
    say "installing torch==$version and its torchvision from PyPI into $venv"
    python3 -m venv --clear "$venv" >&2 ||
      no_wheel "cannot make a virtual environment (python3 -m venv $venv) to install the torch wheel"
    "$venv/bin/pip" install -q "torch==$version" torchvision >&2 ||
      no_wheel "cannot install torch==$version and torchvision from PyPI into $venv"
  fi
  "$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)'
}

prefix() {
  local chosen
  chosen=$(kind)
  case "$chosen" in
    debian) echo "" ;;
    wheel) wheel_prefix ;;
    path) cmake_prefix_in "$GPUBENCH_LIBTORCH" ;;
  esac
}

record() {
  local at="${1-}"
  if [ -z "$at" ]; then
    echo "LibTorch: Debian's libtorch-dev"
  else
    echo "LibTorch: $(torch_version_at "$at") at $at"
  fi
}

# A build folder configured before the record existed: its CMake cache names the LibTorch.
recorded_in() {
  cat "$1/libtorch.txt" 2>/dev/null && return
  local torch_dir
  torch_dir=$(sed -n 's/^Torch_DIR:PATH=//p' "$1/CMakeCache.txt")
  case "$torch_dir" in
    /usr/*) record "" ;;
    ?*) record "$(dirname "$torch_dir")" ;;
    *) echo "an unknown LibTorch" ;;
  esac
}

# Keeps `folder` when it was built against the LibTorch at `prefix`, else empties it; then
# records that LibTorch in it.
build_folder() {
  local folder="$1" wanted built_with
  wanted=$(record "$2")
  if [ -f "$folder/CMakeCache.txt" ]; then
    built_with=$(recorded_in "$folder")
    if [ "$built_with" != "$wanted" ]; then
      say "$folder was built against $built_with; rebuilding it from clean"
      rm -rf "$folder"
    fi
  fi
  mkdir -p "$folder"
  echo "$wanted" >"$folder/libtorch.txt"
  say "building in $folder against $wanted"
}

case "${1-}" in
  kind) kind ;;
  prefix) prefix ;;
  record) record "${2-}" ;;
  build-folder) build_folder "$2" "${3-}" ;;
  wheel-version) choose_wheel_version "$(driver_cuda)" ;;
  *)
    echo "usage: $0 kind|prefix|wheel-version|record PREFIX|build-folder DIR PREFIX" >&2
    exit 2
    ;;
esac
