#!/usr/bin/env bash
# Installs the dependencies from Debian's packages and builds gpubench (Release) in build/.
#   setup.sh             everything: gpubench and the whole test suite (scripts/test.sh)
#   setup.sh TARGET...   only what building those targets needs, and only them
#                        (scripts/benchmark.sh: gpubench gpubench-train)
# Idempotent; run as root or with sudo available. GPUBENCH_BUILD_DIR overrides build/.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")

build_packages=(
  build-essential cmake ninja-build git ccache
  libtorch-dev libgloo-dev
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
if [ "${#targets[@]}" -eq 0 ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_BUILD_TESTS=ON
  cmake --build "$build_dir" --parallel "$(nproc)"
else
  # A build folder configured before keeps its settings; a new one leaves out the tests, whose
  # packages were not installed.
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_BUILD_TESTS=OFF
  fi
  cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]}"
fi
