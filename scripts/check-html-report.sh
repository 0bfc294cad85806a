#!/usr/bin/env bash
# Renders the HTML report of the test fixtures in headless Chromium and checks that the charts
# drew: the first two bar colours must cover real areas of the screenshot.
# Usage: check-html-report.sh [path/to/gpubench]
set -euo pipefail
cd "$(dirname "$0")/.."
gpubench="${1:-build/gpubench}"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "check-html-report: chromium is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$gpubench" report tests/fixtures/reports --format html --output "$work/report.html"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1400 \
  --user-data-dir="$work/profile" --screenshot="$work/report.png" "file://$work/report.html" \
  >"$work/browser.log" 2>&1 || { cat "$work/browser.log" >&2; exit 1; }
counts=$(python3 scripts/png_colour_count.py "$work/report.png" '#4e79a7' '#f28e2b')
echo "$counts"
echo "$counts" | awk '$2 < 400 { bad = 1; print "check-html-report: too few pixels of " $1 " (" $2 "): the chart did not draw" > "/dev/stderr" } END { exit bad }'
[ -z "${GPUBENCH_KEEP_SCREENSHOT:-}" ] || cp "$work/report.png" "$GPUBENCH_KEEP_SCREENSHOT"
echo "check-html-report: charts drew"
