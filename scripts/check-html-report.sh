#!/usr/bin/env bash
# Renders the HTML report of the test fixtures, and the trend page of the history fixtures, in
# headless Chromium and checks that the charts drew: the report's first two bar colours, and the
# trend's series (blue), segment levels (orange) and change-point marker (red), must cover real
# areas of the screenshots.
# Usage: check-html-report.sh [path/to/gpubench]
set -euo pipefail
cd "$(dirname "$0")/.."
gpubench="${1:-build/gpubench}"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "check-html-report: chromium is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
screenshot() {  # screenshot PAGE.html IMAGE.png [HEIGHT]
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,"${3:-1400}" \
    --user-data-dir="$work/profile" --screenshot="$2" "file://$1" \
    >"$work/browser.log" 2>&1 || { cat "$work/browser.log" >&2; exit 1; }
}
expect_pixels() {  # expect_pixels IMAGE.png MINIMUM COLOUR...
  local image=$1 minimum=$2
  shift 2
  local counts
  counts=$(python3 scripts/png_colour_count.py "$image" "$@")
  echo "$counts"
  echo "$counts" | awk -v min="$minimum" '$2 < min { bad = 1; print "check-html-report: too few pixels of " $1 " (" $2 "): the chart did not draw" > "/dev/stderr" } END { exit bad }'
}
"$gpubench" report tests/fixtures/reports --format html --output "$work/report.html"
screenshot "$work/report.html" "$work/report.png"
expect_pixels "$work/report.png" 400 '#4e79a7' '#f28e2b'
"$gpubench" trend tests/fixtures/history --baseline tests/fixtures/history/2026-11-01 \
  --format html --output "$work/trend.html"
screenshot "$work/trend.html" "$work/trend.png"
expect_pixels "$work/trend.png" 400 '#4e79a7' '#f28e2b' '#e15759'
# The report over several nights ends with their history: the same charts, below today's tables.
"$gpubench" report tests/fixtures/history --format html --output "$work/history.html"
screenshot "$work/history.html" "$work/history.png" 4000
expect_pixels "$work/history.png" 400 '#e15759'
# GPUBENCH_KEEP_SCREENSHOT=DIR keeps the screenshots there.
[ -z "${GPUBENCH_KEEP_SCREENSHOT:-}" ] || cp "$work"/*.png "$GPUBENCH_KEEP_SCREENSHOT/"
echo "check-html-report: charts drew"
