# Shared by the action's scripts (action.yml): inputs arrive in TOOLGATE_*
# environment variables; every script fails closed on a malformed input.

fail() {
  echo "toolgate action: $*" >&2
  exit 2
}

# A `true`/`false` input, as GitHub passes booleans: anything else is an error.
flag() {
  case "$2" in
    true) return 0 ;;
    false) return 1 ;;
    *) fail "input $1 must be true or false, not '$2'" ;;
  esac
}

# PROJECTS: the words of TOOLGATE_PROJECTS, globs expanded (a glob matching
# nothing stays as written, and toolgate says it does not exist).
read_projects() {
  PROJECTS=()
  local w
  for w in ${TOOLGATE_PROJECTS:-.}; do
    PROJECTS+=("$w")
  done
  [ "${#PROJECTS[@]}" -gt 0 ] || fail "input projects names no directory"
}

# Tell a later step (GITHUB_OUTPUT), or the terminal outside GitHub.
output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "$1=$2" >>"$GITHUB_OUTPUT"
  else
    echo "$1=$2"
  fi
}

command -v toolgate >/dev/null 2>&1 || [ "${TOOLGATE_NO_CLI_NEEDED:-}" = 1 ] \
  || fail "no toolgate on PATH (the install step, scripts/action/install.sh, puts it there)"
