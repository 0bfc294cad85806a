#!/usr/bin/env bash
# The README's second command: set up, build everything, and run the whole test suite through
# CTest. Extra arguments go to ctest (then, as a partial run, the schema check does not require
# every kind of result).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ "$#" -eq 0 ] && export GPUBENCH_SCHEMA_REQUIRE_KINDS=1
started=$(date +%s)
ctest --test-dir "${GPUBENCH_BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)" "$@"
# The suite's time on this CPU (docs/development.md records it by CPU model). Virtual machines
# may name different CPUs alike ("AMD EPYC"): the family and model, and the widest vector unit,
# tell them apart (bf16 work is emulated without AVX-512 BF16).
flags=" $(sed -n '/^flags/{s/^flags\t*: //p;q}' /proc/cpuinfo) " vectors=""
for flag in amx_bf16 avx512_bf16 avx512f avx2; do
  if [[ "$flags" == *" $flag "* ]]; then vectors=$flag; break; fi
done
echo "test.sh: ctest took $(($(date +%s) - started)) s at --parallel $(nproc) on" \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
  "(family $(sed -n 's/^cpu family\t*: //p' /proc/cpuinfo | head -1)," \
  "model $(sed -n 's/^model\t*: //p' /proc/cpuinfo | head -1), ${vectors:-no AVX2})"
