#!/usr/bin/env bash
# The nightly job of a lab node (docs/nightly.md), which the CI templates in ci/ run: the nightly
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
# Exit: 0 clean, 1 a regression or a failed benchmark (the job fails), 2 bad input or setup
# (an output folder that is /, $HOME, the repository, or holds the history, the baseline or
# earlier nights is refused before anything is deleted).
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
# The output folder is emptied of last night's files, so it must never be one whose contents
# matter: not /, $HOME, the repository, the history or the baseline, nor a folder holding or
# inside either, nor one holding earlier nights. Only what this job made is ever deleted.
refuse() { echo "nightly: GPUBENCH_NIGHTLY_OUT=$out $1; give the job a folder of its own" >&2; exit 2; }
real() { realpath -m -- "$1"; }
out_real=$(real "$out")
for place in / "${HOME:-/root}" "$PWD"; do
  [ "$out_real" != "$(real "$place")" ] || refuse "is $place"
done
for kept in "$history" "$baseline"; do
  case "$(real "$kept")/" in "$out_real"/*) refuse "holds $kept" ;; esac
  case "$out_real/" in "$(real "$kept")"/*) refuse "is inside $kept" ;; esac
done
if [ -d "$out" ] && [ -n "$(find "$out" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' -print -quit)" ]; then
  refuse "holds earlier nights"
fi
copy_mark=.gpubench-nightly-copy  # in the results folder this job copies, and only there
if [ -e "$out/results" ] && [ ! -f "$out/results/$copy_mark" ]; then
  refuse "has a results folder that this job did not make"
fi
mkdir -p "$history" "$out" || exit 2
rm -rf "$out/results"
for made in junit.xml regress.txt trend.html trend.json report.html; do
  if [ -f "$out/$made" ] || [ -L "$out/$made" ]; then rm -f "$out/$made"; fi
done

# A benchmark that fails is recorded as a failed result and the suite goes on (exit 1): regress
# then reports it as FAILED, so the gate still runs.
"$gpubench" run "$suite" --output "$tonight"
run_status=$?
[ "$run_status" -le 1 ] || { echo "nightly: the suite could not run (exit $run_status)" >&2; exit "$run_status"; }
cp -r "$tonight" "$out/results" && touch "$out/results/$copy_mark"

gate_status=0
if [ -d "$baseline" ] && [ -n "$(find "$baseline" -name '*.json' -print -quit)" ]; then
  "$gpubench" regress --baseline "$baseline" --current "$tonight" --junit "$out/junit.xml" \
    | tee "$out/regress.txt"
  gate_status=${PIPESTATUS[0]}
  trend_baseline=(--baseline "$baseline")
else
  # The baseline changes only on purpose (docs/nightly.md): never made here from tonight.
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
