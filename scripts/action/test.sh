#!/usr/bin/env bash
# action.yml, step 3: `toolgate test --format junit` over the projects. The
# report is written even when a case fails; on failure the text report is
# printed too (FILE:LINE: name, expected and actual).
#   TOOLGATE_PROJECTS, TOOLGATE_JUNIT, TOOLGATE_THRESHOLD (empty: none)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read_projects
junit="${TOOLGATE_JUNIT:?TOOLGATE_JUNIT is not set}"
args=()
if [ -n "${TOOLGATE_THRESHOLD:-}" ]; then
  [[ "$TOOLGATE_THRESHOLD" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "input coverage-threshold must be a number, not '$TOOLGATE_THRESHOLD'"
  args+=(--threshold "$TOOLGATE_THRESHOLD")
fi

status=0
toolgate test --format junit "${args[@]}" "${PROJECTS[@]}" >"$junit" || status=$?
output junit-file "$junit"
if [ "$status" -ne 0 ]; then
  [ -s "$junit" ] || fail "toolgate test failed (exit $status) and wrote no JUnit report"
  toolgate test "${args[@]}" "${PROJECTS[@]}" || true
fi
exit "$status"
