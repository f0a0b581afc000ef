#!/usr/bin/env bash
# action.yml, step 2: `toolgate check --format sarif` over the projects, for
# code scanning. The SARIF log is written even when the check fails (upload
# it with `if: always()`); on failure the diagnostics are printed again as
# GitHub annotations so the job log says why.
#   TOOLGATE_PROJECTS, TOOLGATE_DENY_WARNINGS (true|false), TOOLGATE_SARIF
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read_projects
sarif="${TOOLGATE_SARIF:?TOOLGATE_SARIF is not set}"
args=()
if flag deny-warnings "${TOOLGATE_DENY_WARNINGS:-true}"; then
  args+=(--deny-warnings)
fi

status=0
toolgate check --format sarif "${args[@]}" "${PROJECTS[@]}" >"$sarif" || status=$?
output sarif-file "$sarif"
case "$status" in
  0) echo "toolgate check: no diagnostics to fail on; SARIF in $sarif" ;;
  1)
    [ -s "$sarif" ] || fail "toolgate check failed and wrote no SARIF"
    toolgate check --format github "${args[@]}" "${PROJECTS[@]}" || true
    ;;
  *) fail "toolgate check could not run (exit $status)" ;;
esac
exit "$status"
