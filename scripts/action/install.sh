#!/usr/bin/env bash
# action.yml, step 1: install the `toolgate` command from its wheel into a
# virtual environment of its own and put (only) that command on PATH.
#   TOOLGATE_PACKAGE     pip requirement, or a wheel's path or URL
#   TOOLGATE_FIND_LINKS  optional: a directory or URL of wheels (pip --find-links)
#   TOOLGATE_PYTHON      the interpreter (default python3)
#   TOOLGATE_VENV        where the environment goes
set -euo pipefail
TOOLGATE_NO_CLI_NEEDED=1
. "$(dirname "$0")/lib.sh"

package="${TOOLGATE_PACKAGE:?TOOLGATE_PACKAGE is not set}"
venv="${TOOLGATE_VENV:?TOOLGATE_VENV is not set}"
python="${TOOLGATE_PYTHON:-python3}"
command -v "$python" >/dev/null || fail "no Python interpreter '$python' (input python)"

"$python" -m venv "$venv" || fail "could not create a virtual environment in $venv"
pip_args=(install --quiet --disable-pip-version-check)
if [ -n "${TOOLGATE_FIND_LINKS:-}" ]; then
  pip_args+=(--find-links "$TOOLGATE_FIND_LINKS")
fi
"$venv/bin/python" -m pip "${pip_args[@]}" "$package"
[ -x "$venv/bin/toolgate" ] || fail "'$package' installed no toolgate command (is it the toolgate-cli wheel?)"

# Only the command on PATH, not the environment's python and pip.
bin="$venv/toolgate-bin"
mkdir -p "$bin"
ln -sf "$venv/bin/toolgate" "$bin/toolgate"
"$bin/toolgate" --version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$bin" >>"$GITHUB_PATH"
else
  echo "toolgate is in $bin (add it to PATH)"
fi
