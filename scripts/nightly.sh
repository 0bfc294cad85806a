#!/usr/bin/env bash
# The nightly job of a lab node (README, Nightly), which the CI templates in ci/ run: the nightly
# suite into the history, regress against the baseline (JUnit), then trend and report over the
# whole history. Run from the repository root after scripts/setup.sh.
#
# Environment (defaults in brackets):
#   GPUBENCH_NIGHTLY_SUITE  the suite [configs/nightly.yaml]
#   GPUBENCH_HISTORY        every night's results, one folder a night; keep it on a disk that
#                           outlives the job's workspace [results/nightly]
#   GPUBENCH_BASELINE       the reviewed baseline results [results/baseline]
#   GPUBENCH_NIGHTLY_OUT    what the CI job publishes: junit.xml, regress.txt, trend.html,
#                           trend.json, report.html and a copy of tonight's results [nightly-out]
#   GPUBENCH_NIGHT          tonight's folder name [today's UTC date, YYYY-MM-DD]
#   GPUBENCH                the gpubench binary [build/gpubench]
#
# Exit: 0 clean, 1 a regression or a failed benchmark (the job fails), 2 bad input or setup.
set -uo pipefail
cd "$(dirname "$0")/.."

suite="${GPUBENCH_NIGHTLY_SUITE:-configs/nightly.yaml}"
history="${GPUBENCH_HISTORY:-results/nightly}"
baseline="${GPUBENCH_BASELINE:-results/baseline}"
out="${GPUBENCH_NIGHTLY_OUT:-nightly-out}"
night="${GPUBENCH_NIGHT:-$(date -u +%F)}"
gpubench="${GPUBENCH:-build/gpubench}"
tonight="$history/$night"

[ -x "$gpubench" ] || { echo "nightly: $gpubench is not built (run scripts/setup.sh)" >&2; exit 2; }
[ -f "$suite" ] || { echo "nightly: no suite at $suite" >&2; exit 2; }
if [ -e "$tonight" ]; then
  echo "nightly: $tonight exists already; a night is run once (set GPUBENCH_NIGHT)" >&2
  exit 2
fi
mkdir -p "$history" "$out" || exit 2
rm -rf "$out/results" "$out/junit.xml" "$out/regress.txt" "$out/trend.html" "$out/trend.json" \
  "$out/report.html"

# A benchmark that fails is recorded as a failed result and the suite goes on (exit 1): regress
# then reports it as FAILED, so the gate still runs.
"$gpubench" run "$suite" --output "$tonight"
run_status=$?
[ "$run_status" -le 1 ] || { echo "nightly: the suite could not run (exit $run_status)" >&2; exit "$run_status"; }
cp -r "$tonight" "$out/results"

gate_status=0
if [ -d "$baseline" ] && [ -n "$(find "$baseline" -name '*.json' -print -quit)" ]; then
  "$gpubench" regress --baseline "$baseline" --current "$tonight" --junit "$out/junit.xml" \
    | tee "$out/regress.txt"
  gate_status=${PIPESTATUS[0]}
  trend_baseline=(--baseline "$baseline")
else
  # The baseline changes only on purpose (README, Nightly): never made here from tonight.
  echo "nightly: no baseline results in $baseline: regress skipped; after review," \
       "cp -r $tonight $baseline" | tee "$out/regress.txt"
  trend_baseline=()
fi

"$gpubench" trend "$history" "${trend_baseline[@]}" --format html --output "$out/trend.html" &&
  "$gpubench" trend "$history" "${trend_baseline[@]}" --format json --output "$out/trend.json" &&
  "$gpubench" report "$history" --format html --output "$out/report.html"
publish_status=$?

if [ "$gate_status" -ge 2 ] || [ "$publish_status" -ne 0 ]; then exit 2; fi
if [ "$gate_status" -eq 1 ] || [ "$run_status" -eq 1 ]; then exit 1; fi
exit 0
