#!/usr/bin/env bash
# Runs one fuzz target (tests/fuzz/) over a copy of its checked-in corpus, for a bounded time or,
# with SECONDS 0, for the corpus and a fixed 2,000 inputs mutated from it (seed 1: the same
# inputs every run, so the suite's fuzz tests do the same work wherever they run).
# Exit 0 when libFuzzer found nothing: no crash, no sanitizer report, no broken contract
# (fuzz_contract.h), no input slower than 10 s or using more than 2 GiB.
#   usage: run-fuzz.sh TARGET_BINARY CORPUS_DIR [SECONDS]   (default 30)
# GPUBENCH_FUZZ_SECONDS in the environment overrides SECONDS (CI runs each target longer).
# A finding is written to $GPUBENCH_FUZZ_ARTIFACTS (default: the working folder, printed).
set -euo pipefail
binary="$1" corpus="$2" seconds="${GPUBENCH_FUZZ_SECONDS:-${3:-30}}"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpubench-fuzz-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp -r "$corpus"/. "$work/corpus/"
artifacts="${GPUBENCH_FUZZ_ARTIFACTS:-$work}"
mkdir -p "$artifacts"
if [ "$seconds" = 0 ]; then bound=(-runs=2000 -seed=1); else bound=(-max_total_time="$seconds"); fi
status=0
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$binary" "$work/corpus" "${bound[@]}" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$work/log" 2>&1 ||
  status=$?
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$work/log" || true
if [ "$status" -ne 0 ]; then
  tail -n 60 "$work/log"
  ls -l "$artifacts" | grep -E "crash-|leak-|timeout-|oom-" || true
  if [ -z "${GPUBENCH_FUZZ_ARTIFACTS:-}" ]; then
    for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
      [ -f "$f" ] && { echo "--- $f (base64)"; base64 "$f" | head -c 4000; echo; }
    done
  fi
  exit 1
fi
