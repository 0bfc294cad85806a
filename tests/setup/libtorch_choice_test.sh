#!/usr/bin/env bash
# scripts/libtorch.sh's choices, offline: fakes of nvidia-smi, the driver's /proc folder, a
# python3 with torch, and pip (PyPI's torch versions and each wheel's CUDA) stand in for the
# machine and the network. Prints "N passed, N failed".
set -uo pipefail
source_dir="$1"
script="$source_dir/scripts/libtorch.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

check() {  # check NAME EXPECTED_RC EXPECTED_STDOUT STDERR_PATTERN -- env... (runs libtorch.sh ARGS from $args)
  local name="$1" want_rc="$2" want_out="$3" want_err="$4"
  shift 4
  local out err rc
  out=$(env -i HOME="$HOME" PATH="$work/bin:/usr/bin:/bin" GPUBENCH_NVIDIA_PROC="$work/no-driver" \
    GPUBENCH_DEPS_DIR="$work/deps" GPUBENCH_PYTHON="$work/bin/python-without-torch" "$@" \
    bash "$script" "${args[@]}" 2>"$work/stderr")
  rc=$?
  err=$(cat "$work/stderr")
  if [ "$rc" = "$want_rc" ] && [ "$out" = "$want_out" ] && grep -Eq -- "$want_err" <<<"$err" &&
    { [ "$rc" = 0 ] || [ "$(wc -l <<<"$err")" = 1 ]; }; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name: rc $rc (want $want_rc), stdout '$out' (want '$want_out'), stderr:"
    echo "$err" | sed 's/^/    /'
  fi
}

mkdir -p "$work/bin" "$work/deps/pip-venv/bin"
# No GPU: an nvidia-smi that fails, as on a machine without the driver.
printf '#!/bin/sh\nexit 9\n' >"$work/bin/nvidia-smi"
printf '#!/bin/sh\nexit 1\n' >"$work/bin/python-without-torch"
# A python3 whose torch has CUDA.
cat >"$work/bin/python-with-cuda-torch" <<'PY'
#!/bin/sh
case "$*" in
  *cmake_prefix_path*) echo /opt/site-packages/torch/share/cmake ;;
  *__version__*) echo 2.9.1+cu128 ;;
  *torchvision*) exit 0 ;;
esac
PY
# PyPI as pip sees it: four versions, each wheel's CUDA in its metadata (torch 2.11 names
# cuda-toolkit, older ones nvidia-cuda-runtime-cu12); 1.13.1 is below 2.0 and never chosen.
cat >"$work/deps/pip-venv/bin/pip" <<'PIP'
#!/bin/sh
[ -n "$FAKE_PYPI_DOWN" ] && { echo "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)"; exit 1; }
case "$*" in
  "index versions torch") echo "torch (2.11.0)"; echo "Available versions: 2.11.0, 2.10.0, 2.7.0, 2.6.0, 1.13.1" ;;
  *torch==2.11.0*) echo '{"install": [{"metadata": {"requires_dist": ["cuda-toolkit[cublas,cudart]==13.0.2; platform_system == \"Linux\""]}}]}' ;;
  *torch==2.10.0*) echo '{"install": [{"metadata": {"requires_dist": ["nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\""]}}]}' ;;
  *torch==2.7.0*) echo '{"install": [{"metadata": {"requires_dist": ["nvidia-cuda-runtime-cu12 (==12.6.77) ; platform_system == \"Linux\""]}}]}' ;;
  *torch==2.6.0*) echo '{"install": [{"metadata": {"requires_dist": ["nvidia-cuda-runtime-cu12 (==12.4.127) ; platform_system == \"Linux\""]}}]}' ;;
  *) exit 3 ;;
esac
PIP
ln -s "$(command -v python3)" "$work/deps/pip-venv/bin/python"
chmod +x "$work/bin/"* "$work/deps/pip-venv/bin/pip"
# A GPU whose driver supports CUDA 12.6.
mkdir -p "$work/gpu-bin"
cat >"$work/gpu-bin/nvidia-smi" <<'SMI'
#!/bin/sh
[ "$1" = -L ] && { echo "GPU 0: NVIDIA A40 (UUID: GPU-0)"; exit 0; }
echo "| NVIDIA-SMI 560.35.03    Driver Version: 560.35.03    CUDA Version: 12.6     |"
SMI
chmod +x "$work/gpu-bin/nvidia-smi"
gpu_path="$work/gpu-bin:$work/bin:/usr/bin:/bin"
# A driver without nvidia-smi: only /proc/driver/nvidia/version (555.42: CUDA 12.5).
mkdir -p "$work/proc-driver"
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  555.42.06  Tue Jun  4 00:00:00 UTC 2024" \
  >"$work/proc-driver/version"
# A LibTorch archive's layout.
mkdir -p "$work/libtorch/share/cmake/Torch"
touch "$work/libtorch/share/cmake/Torch/TorchConfig.cmake"
echo 'set(PACKAGE_VERSION "2.8.0")' >"$work/libtorch/share/cmake/Torch/TorchConfigVersion.cmake"

args=(kind)
check "no GPU: Debian's" 0 debian '^$'
check "a GPU (nvidia-smi): the wheel" 0 wheel '^$' PATH="$gpu_path"
check "a GPU (/proc only): the wheel" 0 wheel '^$' GPUBENCH_NVIDIA_PROC="$work/proc-driver"
check "override wins over the GPU" 0 debian '^$' PATH="$gpu_path" GPUBENCH_LIBTORCH=debian
check "an unknown value" 2 "" "^setup: GPUBENCH_LIBTORCH=cuda is not debian, wheel or an absolute path" GPUBENCH_LIBTORCH=cuda
check "set but empty" 2 "" "^setup: GPUBENCH_LIBTORCH='' is not" GPUBENCH_LIBTORCH=
check "a folder without LibTorch, before anything is installed" 2 "" "holds no LibTorch" GPUBENCH_LIBTORCH="$work"
check "a LibTorch folder" 0 path '^$' GPUBENCH_LIBTORCH="$work/libtorch"
check "control characters echoed escaped" 2 "" "^setup: GPUBENCH_LIBTORCH=\\$'x\\\\E\\[2J'" GPUBENCH_LIBTORCH=$'x\e[2J'

args=(prefix)
check "no GPU: Debian's, found by CMake" 0 "" '^$'
check "a folder without LibTorch" 2 "" "^setup: GPUBENCH_LIBTORCH=$work holds no LibTorch.*set it to debian, wheel" GPUBENCH_LIBTORCH="$work"
check "a LibTorch archive" 0 "$work/libtorch/share/cmake" '^$' GPUBENCH_LIBTORCH="$work/libtorch"
check "the python3 torch with CUDA first" 0 /opt/site-packages/torch/share/cmake \
  "the torch 2.9.1\+cu128 with CUDA of" PATH="$gpu_path" GPUBENCH_PYTHON="$work/bin/python-with-cuda-torch"
check "no network: what was tried and the override" 1 "" \
  "^setup: cannot list the torch wheels on PyPI \(pip index versions torch: ERROR: .*\); set GPUBENCH_LIBTORCH=/path/to/libtorch .*GPUBENCH_LIBTORCH=debian" \
  PATH="$gpu_path" FAKE_PYPI_DOWN=1

args=(wheel-version)
check "driver CUDA 12.6 (nvidia-smi): torch 2.7.0" 0 2.7.0 \
  "^setup: torch 2.7.0 chosen: its wheel is built with CUDA 12.6, the newest on PyPI that the driver's CUDA 12.6 runs$" \
  PATH="$gpu_path"
check "driver 555.42 (/proc): CUDA 12.5, torch 2.6.0" 0 2.6.0 "CUDA 12.4, the newest on PyPI that the driver's CUDA 12.5 runs" \
  GPUBENCH_NVIDIA_PROC="$work/proc-driver"
check "no driver: the newest" 0 2.11.0 "torch 2.11.0 chosen: the newest on PyPI \(CUDA 13.0\)"
printf '#!/bin/sh\n[ "$1" = -L ] && exit 0\necho "CUDA Version: 11.4"\n' >"$work/gpu-bin/nvidia-smi"
check "a driver too old for every wheel" 1 "" "^setup: no torch wheel on PyPI is built for a CUDA the driver supports \(CUDA 11.4\); set GPUBENCH_LIBTORCH" \
  PATH="$gpu_path"

# The build folder: kept for the same LibTorch, emptied for another, an unrecorded one judged by
# its CMake cache.
mkdir -p "$work/build"
echo "Torch_DIR:PATH=/usr/lib/x86_64-linux-gnu/cmake/Torch" >"$work/build/CMakeCache.txt"
touch "$work/build/object.o"
args=(build-folder "$work/build" "")
check "an unrecorded Debian build is kept" 0 "" "building in .* against LibTorch: Debian's libtorch-dev"
[ -f "$work/build/object.o" ] && [ "$(cat "$work/build/libtorch.txt")" = "LibTorch: Debian's libtorch-dev" ] &&
  passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAILED: the Debian build was not kept and recorded"; }
args=(build-folder "$work/build" "$work/libtorch/share/cmake")
check "another LibTorch empties it" 0 "" "was built against LibTorch: Debian's libtorch-dev; rebuilding it from clean"
[ ! -f "$work/build/object.o" ] && [ "$(cat "$work/build/libtorch.txt")" = "LibTorch: 2.8.0 at $work/libtorch/share/cmake" ] &&
  passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAILED: the build folder was not emptied and recorded"; }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
