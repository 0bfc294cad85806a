#!/usr/bin/env bash
# Writes the reference pages of docs/reference/ from the code (`gpubench help-reference TOPIC`,
# and the folders' layers from scripts/folder-graph.py);
# with --check, writes nothing and fails, showing the difference, where a committed page is not
# what the code generates (a CTest test runs it so).
#   usage: generate-docs.sh [--check] [BUILD_DIR]   (default $GPUBENCH_BUILD_DIR or build)
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
build="${1:-${GPUBENCH_BUILD_DIR:-build}}"
generated="$(mktemp)"
trap 'rm -f "$generated"' EXIT
status=0
# Writes what COMMAND prints to PAGE, or with --check compares them.
#   page_from PAGE COMMAND...
page_from() {
  local page="$1"
  shift
  "$@" >"$generated"
  if ! $check; then
    cat "$generated" >"$page"
  elif ! diff -u "$page" "$generated"; then
    echo "generate-docs: $page is not what \`$*\` prints; run: bash scripts/generate-docs.sh" >&2
    status=1
  fi
}
for topic in options models exit-codes resolve-rules; do
  page_from "docs/reference/$topic.md" "$build/gpubench" help-reference "$topic"
done
# The folders' layers, from the #include lines (scripts/folder-graph.py).
page_from docs/reference/folders.md python3 scripts/folder-graph.py . --markdown
exit "$status"
