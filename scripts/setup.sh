#!/usr/bin/env bash
# Installs the dependencies from Debian's packages and builds gpubench (Release) in build/.
#   setup.sh             everything: gpubench and the whole test suite (scripts/test.sh)
#   setup.sh TARGET...   only what building those targets needs, and only them
#                        (scripts/benchmark.sh: gpubench gpubench-train)
# The LibTorch is the machine's (scripts/libtorch.sh): with an NVIDIA driver, a CUDA LibTorch (the
# torch with CUDA of the python3 on PATH, else the torch wheel from PyPI in .deps/); without one,
# Debian's libtorch-dev (1.13, CPU). GPUBENCH_LIBTORCH=debian|wheel|/path/to/libtorch overrides,
# GPUBENCH_TORCH_VERSION pins the wheel. The build folder records the LibTorch it was configured
# with (libtorch.txt); another LibTorch rebuilds it from clean.
# Idempotent; run as root or with sudo available. GPUBENCH_BUILD_DIR overrides build/.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
libtorch_kind=$(bash scripts/libtorch.sh kind)  # a bad GPUBENCH_LIBTORCH stops here, exit 2

build_packages=(
  build-essential cmake ninja-build git ccache
  libgloo-dev
  libopenblas0-pthread  # without it LibTorch's CPU matmuls fall back to the reference BLAS (~15x slower)
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev
)
test_packages=(
  libgtest-dev
  python3-jsonschema  # the result files checked against schemas/result.schema.json
  python3-torchvision  # the detection models' references, on Debian's LibTorch (python3-torch)
  chromium fonts-dejavu-core  # the HTML report's test renders it in a headless browser
  iproute2 util-linux  # the two-node test: ranks in network namespaces with their own host names
  clang-14 libclang-rt-14-dev  # the fuzz targets: libFuzzer with the address and UB sanitizers
)
packages=("${build_packages[@]}")
[ "${#targets[@]}" -eq 0 ] && packages+=("${test_packages[@]}")
case "$libtorch_kind" in
  debian) packages+=(libtorch-dev) ;;
  wheel) packages+=(python3-venv) ;;  # the wheel's virtual environment
esac

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build_dir="${GPUBENCH_BUILD_DIR:-build}"
libtorch_prefix=$(bash scripts/libtorch.sh prefix)
bash scripts/libtorch.sh build-folder "$build_dir" "$libtorch_prefix"
configure=(cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${GPUBENCH_CMAKE_ARGS-})
if [ -n "$libtorch_prefix" ]; then configure+=("-DCMAKE_PREFIX_PATH=$libtorch_prefix"); fi
# A CUDA LibTorch's CMake config looks for the CUDA toolkit, in /usr/local/cuda where it is not on PATH.
if [ -d /usr/local/cuda/bin ]; then export PATH="$PATH:/usr/local/cuda/bin"; fi
if [ "${#targets[@]}" -eq 0 ]; then
  "${configure[@]}" -DGPUBENCH_BUILD_TESTS=ON
  cmake --build "$build_dir" --parallel "$(nproc)"
else
  # A build folder configured before keeps its settings; a new one leaves out the tests, whose
  # packages were not installed.
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    "${configure[@]}" -DGPUBENCH_BUILD_TESTS=OFF
  fi
  cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]}"
fi
