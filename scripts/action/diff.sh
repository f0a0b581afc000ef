#!/usr/bin/env bash
# action.yml, step 4 (pull requests): the semantic diff of every project
# against the base revision, as the Markdown comment of docs/ci.md, written
# to TOOLGATE_COMMENT (and to the job summary on GitHub). A widening sets the
# output `widens=true` and, under fail-on-widen, fails the step after the
# comment is complete.
#   TOOLGATE_PROJECTS, TOOLGATE_BASE (a git revision), TOOLGATE_COMMENT,
#   TOOLGATE_FAIL_ON_WIDEN (true|false)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read_projects
base="${TOOLGATE_BASE:?TOOLGATE_BASE is not set}"
[ "$base" != "origin/" ] || fail "no base revision (input base is empty and this is not a pull request)"
comment="${TOOLGATE_COMMENT:?TOOLGATE_COMMENT is not set}"
fail_on_widen=false
if flag fail-on-widen "${TOOLGATE_FAIL_ON_WIDEN:-true}"; then
  fail_on_widen=true
fi
git rev-parse --verify --quiet "$base^{commit}" >/dev/null \
  || fail "base revision '$base' is not in this clone (actions/checkout needs fetch-depth: 0)"

# `toolgate diff` takes one project: a directory that is not a project means
# every project below it, found by the rules of `toolgate check` (hidden
# directories, target, node_modules and vendor are not searched).
dirs=()
for p in "${PROJECTS[@]}"; do
  p="${p%/}"
  [ -n "$p" ] || p=/
  if [ -f "$p/toolgate.toml" ]; then
    dirs+=("$p")
  elif [ "$(basename "$p")" = toolgate.toml ] && [ -f "$p" ]; then
    dirs+=("$(dirname "$p")")
  elif [ -d "$p" ]; then
    found="$(find "$p" -mindepth 1 -maxdepth 16 \( -type d \( -name '.*' -o -name target -o -name node_modules -o -name vendor \) -prune \) -o -type f -name toolgate.toml -print | LC_ALL=C sort)"
    [ -n "$found" ] || fail "$p holds no toolgate project (no toolgate.toml in it or below it)"
    while IFS= read -r m; do dirs+=("$(dirname "$m")"); done <<<"$found"
  else
    fail "$p does not exist"
  fi
done

: >"$comment"
widens=false
for d in "${dirs[@]}"; do
  status=0
  # One project: the comment of docs/ci.md as it is; several: each under
  # its directory's name.
  if [ "${#dirs[@]}" -gt 1 ]; then
    printf '### `%s`\n\n' "$d" >>"$comment"
  fi
  toolgate diff --git "$base" --format markdown --fail-on-widen "$d" >>"$comment" || status=$?
  case "$status" in
    0) ;;
    1) widens=true ;;
    *) fail "toolgate diff --git $base $d could not run (exit $status)" ;;
  esac
done
output comment-file "$comment"
output widens "$widens"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$comment" >>"$GITHUB_STEP_SUMMARY"
fi
if [ "$widens" = true ] && [ "$fail_on_widen" = true ]; then
  echo "toolgate diff: this change widens access (see $comment)" >&2
  exit 1
fi
