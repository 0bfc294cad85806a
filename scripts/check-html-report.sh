#!/usr/bin/env bash
# Renders gpubench's HTML pages (the report of the test fixtures and of the 47 published results,
# the trend of the history fixtures, the report over several nights) in headless Chromium and
# checks their screenshots:
#   - the charts drew: the series' colours, the trend's series (blue), segment levels (orange)
#     and change-point marker (red), the error bars, cover real areas;
#   - no chart text is clipped: on a copy styled so that each chart is pure green, its texts pure
#     magenta and nothing clips them, no magenta pixel touches the page's white;
#   - no two chart texts overlap: on a copy that draws only the charts' texts, black at half
#     opacity, no pixel is darker than one text can make it;
#   - nothing is drawn right of a 1000-pixel window: the page never scrolls sideways.
# A control page with a clipped and an overlapping label must fail both checks.
# Usage: check-html-report.sh [path/to/gpubench]
set -euo pipefail
cd "$(dirname "$0")/.."
gpubench="${1:-build/gpubench}"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "check-html-report: chromium is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
screenshot() {  # screenshot PAGE.html IMAGE.png [HEIGHT] [WIDTH]
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size="${4:-1000}","${3:-1400}" --user-data-dir="$work/profile" \
    --screenshot="$2" "file://$1" >"$work/browser.log" 2>&1 || { cat "$work/browser.log" >&2; exit 1; }
}
expect_pixels() {  # expect_pixels IMAGE.png MINIMUM COLOUR...
  local image=$1 minimum=$2
  shift 2
  local counts
  counts=$(python3 scripts/png_colour_count.py "$image" "$@")
  echo "$counts"
  echo "$counts" | awk -v min="$minimum" '$2 < min { bad = 1; print "check-html-report: too few pixels of " $1 " (" $2 "): the chart did not draw" > "/dev/stderr" } END { exit bad }'
}
# The page laid out for a 1000-pixel window (its body 952 wide) and shot 1400 wide.
clip_style='<style>body{width:952px !important;margin:24px !important}svg{overflow:visible !important;background:#00ff00 !important}svg *{visibility:hidden !important}svg text,svg text *{visibility:visible !important;fill:#ff00ff !important}</style>'
overlap_style='<style>body{width:952px !important;margin:24px !important}body *{visibility:hidden !important}svg text,svg text *{visibility:visible !important;fill:#000000 !important;opacity:0.5 !important}</style>'
layout_checks() {  # layout_checks PAGE.html HEIGHT: 0 when nothing is clipped, overlaps or is too wide
  local page=$1 height=$2 name
  name=$(basename "$page" .html)
  sed "s|</head>|$clip_style</head>|" "$page" >"$work/$name-clip.html"
  sed "s|</head>|$overlap_style</head>|" "$page" >"$work/$name-overlap.html"
  screenshot "$work/$name-clip.html" "$work/$name-clip.png" "$height" 1400
  screenshot "$work/$name-overlap.html" "$work/$name-overlap.png" "$height" 1400
  local bad=0
  python3 scripts/chart_pixel_checks.py clipping "$work/$name-clip.png" 1000 || bad=1
  python3 scripts/chart_pixel_checks.py overlap "$work/$name-overlap.png" || bad=1
  return $bad
}
cat >"$work/control.html" <<'PAGE'
<!DOCTYPE html><html><head><title>control</title></head><body>
<svg class="chart" width="200" height="60"><text x="150" y="20" font-size="12">a clipped label</text>
<text x="10" y="45" font-size="12">overlapping</text><text x="14" y="47" font-size="12">overlapping</text></svg>
</body></html>
PAGE
if layout_checks "$work/control.html" 400 2>/dev/null; then
  echo "check-html-report: the control page's clipped and overlapping labels were not caught" >&2
  exit 1
fi
"$gpubench" report tests/fixtures/reports --format html --output "$work/report.html"
screenshot "$work/report.html" "$work/report.png"
expect_pixels "$work/report.png" 400 '#4e79a7' '#f28e2b' '#e15759'
expect_pixels "$work/report.png" 8 '#333333'  # error bars
layout_checks "$work/report.html" 2600
# 47 published figures of 14 systems: one colour, bars labelled, a log axis, tables in parts.
"$gpubench" report results/reference --format html --output "$work/reference.html"
screenshot "$work/reference.html" "$work/reference.png" 2000
expect_pixels "$work/reference.png" 400 '#4e79a7'
layout_checks "$work/reference.html" 7000
"$gpubench" trend tests/fixtures/history --baseline tests/fixtures/history/2026-11-01 \
  --format html --output "$work/trend.html"
screenshot "$work/trend.html" "$work/trend.png"
expect_pixels "$work/trend.png" 400 '#4e79a7' '#f28e2b' '#e15759'
layout_checks "$work/trend.html" 2600
# The report over several nights ends with their history: the same charts, below today's tables.
"$gpubench" report tests/fixtures/history --format html --output "$work/history.html"
screenshot "$work/history.html" "$work/history.png" 4000
expect_pixels "$work/history.png" 400 '#e15759'
layout_checks "$work/history.html" 2600
# GPUBENCH_KEEP_SCREENSHOT=DIR keeps the screenshots there.
[ -z "${GPUBENCH_KEEP_SCREENSHOT:-}" ] || cp "$work"/*.png "$GPUBENCH_KEEP_SCREENSHOT/"
echo "check-html-report: charts drew; no chart text clipped or overlapping; no page wider than 1000 pixels"
