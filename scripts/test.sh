#!/usr/bin/env bash
# The README's second command: set up, build, and run the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir "${GPUBENCH_BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)" "$@"
