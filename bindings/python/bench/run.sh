#!/usr/bin/env bash
# BENCHMARKS.md, "Python": the binding, the runtime and the plain-Python gate
# side by side in one run, plus the MCP proxy's round trip. Needs a venv
# with the wheel installed (see .ci/run) as $PYTHON.
set -euo pipefail
cd "$(dirname "$0")/.."
"${PYTHON:-python3}" bench/bench.py "$@" 2>/dev/null
