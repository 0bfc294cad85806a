#!/usr/bin/env bash
# What report, compare, regress and trend print from the committed results, the reference results
# and the nightly fixtures, against what they printed before the restructure of issue 31
# (tests/reading/, written by this script from the commit before it): a refactor must read them
# exactly as before. A CTest test runs it with --check.
#   usage: check-reading-unchanged.sh [--check] [BUILD_DIR]   (default $GPUBENCH_BUILD_DIR or build)
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
gpubench="${1:-${GPUBENCH_BUILD_DIR:-build}}/gpubench"
expected_dir=tests/reading
actual_dir="$(mktemp -d)"
trap 'rm -rf "$actual_dir"' EXIT

reference=results/reference
reports=tests/fixtures/reports
history=tests/fixtures/history
# name|arguments (word-split; no argument here holds a space but the selectors, given with %20)
cases=(
  "report-reference-markdown|report $reference"
  "report-reference-csv|report $reference -f csv"
  "report-reference-json|report $reference -f json"
  "report-reference-html|report $reference -f html"
  "report-gpu-markdown|report results/gpu"
  "report-fixtures-markdown|report $reports"
  "report-fixtures-table|report $reports -f table"
  "report-reference-table|report $reference -f table"
  "report-fixtures-normalized|report $reports --normalize-to gpu=NVIDIA%20A40,gpus=1"
  "report-fixtures-across-batch|report $reports --across batch_size"
  "compare-fixtures-markdown|compare gpu=NVIDIA%20A40 gpu=NVIDIA%20L40S --results $reports"
  "compare-fixtures-json|compare gpu=NVIDIA%20A40 gpu=NVIDIA%20L40S --results $reports -f json"
  "compare-fixtures-html|compare gpu=NVIDIA%20A40 gpu=NVIDIA%20L40S --results $reports -f html"
  "compare-reference-precision|compare precision=fp32 precision=fp16 --results $reference"
  "compare-reference-a40-l40s|compare gpu=NVIDIA%20A40 gpu=NVIDIA%20L40S --results $reference"
  "regress-history|regress --baseline $history/2026-11-01 $history/2026-11-02 $history/2026-11-03 --current $history/2026-11-16"
  "regress-history-table|regress --baseline $history/2026-11-01 $history/2026-11-02 $history/2026-11-03 --current $history/2026-11-16 -f table"
  "trend-history-markdown|trend $history"
  "trend-history-json|trend $history -f json"
  "trend-history-html|trend $history -f html"
  "trend-history-baseline|trend $history --baseline $history/2026-11-01"
)
for entry in "${cases[@]}"; do
  name="${entry%%|*}"
  read -r -a words <<<"${entry#*|}"
  arguments=()
  for word in "${words[@]}"; do arguments+=("${word//%20/ }"); done
  set +e
  "$gpubench" "${arguments[@]}" >"$actual_dir/$name.out" 2>"$actual_dir/$name.err"
  echo "exit $?" >>"$actual_dir/$name.err"
  # A warning's clock time is no part of what is read.
  sed -i -E 's/^\[[0-9]{2}:[0-9]{2}:[0-9]{2}\] //' "$actual_dir/$name.err"
  set -e
done
if ! $check; then
  rm -f "$expected_dir"/*.out "$expected_dir"/*.err
  cp "$actual_dir"/* "$expected_dir"/
  exit 0
fi
if ! diff -ru "$expected_dir" "$actual_dir"; then
  echo "check-reading-unchanged: report, compare, regress or trend reads the committed results" \
    "differently than before (tests/reading/)" >&2
  exit 1
fi
