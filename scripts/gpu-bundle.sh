#!/usr/bin/env bash
# Builds gpubench for a GPU machine here, so that the machine spends none of its short slot
# building (docs/gpu-machines.md, "The bundle"). Builds gpubench and gpubench-train against the
# same torch==2.11.0 CUDA 13 wheel the GPU machine has (scripts/check-torch2.sh's virtual
# environment and build-torch2/), strips them, and packs them with the Debian libraries they
# need that the GPU machine lacks (yaml-cpp, spdlog, fmt) into the git-ignored folder
# .deps/gpu-bundle (at most 40 MiB), with env.sh, which a run there sources: it points
# LD_LIBRARY_PATH at the bundle's libraries and at that machine's own torch/lib and NVIDIA wheel
# libraries, then runs ldd and says in one line what is missing. Carry .deps/gpu-bundle to the
# machine (the device tool's `carry`); scripts/gpu-check.sh uses it when it is there. The unit
# tests (bin/gpubench_tests) go with them, for the CUDA cases only a GPU machine runs
# (`gpubench_tests --gtest_filter='*Cuda*'`).
# Then checks the bundle here, as the GPU machine would use it: ldd resolves every library
# against the wheel's, and a CPU run from the bundle writes a result.
# Needs what scripts/check-torch2.sh needs (its venv and build are reused when present).
set -euo pipefail
cd "$(dirname "$0")/.."
version="${GPUBENCH_TORCH_VERSION:-2.11.0}"
venv="$(realpath -m "${GPUBENCH_DEPS_DIR:-.deps}")/torch-$version-venv"  # where scripts/libtorch.sh installs it
build_dir="${GPUBENCH_TORCH2_BUILD_DIR:-build-torch2}"
bundle=.deps/gpu-bundle
max_mib=40
export PATH="$PATH:/usr/local/cuda/bin"

prefix=$(GPUBENCH_LIBTORCH=wheel GPUBENCH_TORCH_VERSION="$version" bash scripts/libtorch.sh prefix)
bash scripts/libtorch.sh build-folder "$build_dir" "$prefix"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_FUZZ=OFF \
    -DCMAKE_PREFIX_PATH="$prefix"
fi
cmake --build "$build_dir" --target gpubench gpubench-train gpubench_tests --parallel "$(nproc)"

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for program in gpubench gpubench-train; do
  strip -o "$bundle/bin/$program" "$build_dir/$program"
done
strip -o "$bundle/bin/gpubench_tests" "$build_dir/tests/gpubench_tests"
# The libraries that neither the C library, the compiler's runtime nor the torch wheel provide:
# Debian's, which the GPU machine (no apt) does not have.
for program in gpubench gpubench-train; do
  ldd "$build_dir/$program" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
  case "$name" in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|libutil.so.*|libgcc_s.so.*|libstdc++.so.*) ;;
    libtorch*|libc10*|libcudart.so.*|libnccl*|libcu*|libnv*|libgomp*) ;;  # the wheel's
    *) cp -L "$path" "$bundle/lib/$name" ;;
  esac
done

cat > "$bundle/env.sh" <<'ENV'
# Sourced before running the bundle's gpubench: its libraries, then the machine's torch wheel's
# (torch/lib and every nvidia/*/lib beside it, found through this machine's python3). Returns 1,
# having said in one line what is missing, when a library of gpubench-train is not found.
gpubench_bundle="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gpubench_torch_libs=$(python3 - <<'PY'
import glob, os, torch
torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
nvidia = glob.glob(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "**", "lib"),
                   recursive=True)
print(":".join([torch_lib] + sorted(nvidia)))
PY
) || { echo "gpu-bundle: python3 cannot import torch here; the bundle needs the torch wheel's libraries"; return 1; }
export LD_LIBRARY_PATH="$gpubench_bundle/lib:$gpubench_torch_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpubench_missing=$(ldd "$gpubench_bundle/bin/gpubench-train" "$gpubench_bundle/bin/gpubench" |
  awk '/not found/ { print $1 }' | sort -u | tr '\n' ' ')
if [ -n "$gpubench_missing" ]; then
  echo "gpu-bundle: missing on this machine: $gpubench_missing(LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
  return 1
fi
ENV

size_mib=$(( $(du -sb "$bundle" | cut -f1) / 1048576 ))
echo "gpu-bundle: $bundle, ${size_mib} MiB: $(cd "$bundle" && find bin lib -type f | sort | tr '\n' ' ')"
[ "$size_mib" -le "$max_mib" ] || { echo "gpu-bundle: over $max_mib MiB" >&2; exit 1; }

# The check, in a shell whose python3 is the wheel's, as on the GPU machine.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PATH="$venv/bin:$PATH" bash -c "
  set -euo pipefail
  source '$bundle/env.sh'
  for program in gpubench gpubench-train; do
    outside=\$(ldd '$bundle/bin/'\$program | awk '\$2 == \"=>\" && \$3 ~ /^\\// { print \$1, \$3 }' |
      grep -E '^lib(torch|c10|cudart|nccl)' | grep -v '$venv/' || true)
    [ -z \"\$outside\" ] || { echo \"gpu-bundle: \$program binds outside the wheel: \$outside\"; exit 1; }
  done
  '$bundle/bin/gpubench' --log-level warn train --model resnet50 --device cpu --batch-size 2 \
    --warmup-steps 1 --steps 2 --repeat 1 --threads 2 --output '$work/bundle.json'
"
"$venv/bin/python" - "$work/bundle.json" "$version" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
if result["status"] != "ok" or result["system"]["libtorch"] != sys.argv[2]:
    sys.exit(f"gpu-bundle: the CPU run from the bundle: status {result['status']}, "
             f"libtorch {result['system']['libtorch']}")
print(f"gpu-bundle: checked: every library resolves against the wheel's, and a CPU run from the "
      f"bundle wrote a result ({result['metrics']['throughput']:.2f} "
      f"{result['metrics']['throughput_unit']}, libtorch {result['system']['libtorch']})")
PY
