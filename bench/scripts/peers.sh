#!/usr/bin/env bash
# BENCHMARKS.md, "Peer gateways side by side": direct, toolgate gateway,
# mcp-proxy 0.13.0 and IBM ContextForge 1.1.0 in one run, with the official
# Python SDK client and with wrk (bench/scripts/peers.py, contextforge.py,
# mcp_call.lua). Three venvs: the client's and upstream's (mcp 2.3,
# TOOLGATE_MCP_BIN as .ci/run makes it), mcp-proxy's (it pins mcp < 2;
# target/peers-venv) and ContextForge's (Python 3.12; target/contextforge-venv),
# the last two made here when absent; wrk is installed with apt-get when
# absent (as root).
# Usage: bench/scripts/peers.sh [TOOLS [CALLS]]   (default 100 2000)
#   TOOLGATE_BIN=path   use that toolgate binary instead of building one
#   CONTEXTFORGE_PYTHON=path   the Python 3.12 that makes ContextForge's venv
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${TOOLGATE_MCP_BIN:?set TOOLGATE_MCP_BIN to the venv with mcp 2.3}/python"
venv=target/peers-venv
if [ ! -x "$venv/bin/mcp-proxy" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "mcp-proxy==0.13.0"
fi
cf=target/contextforge-venv
if [ ! -x "$cf/bin/mcpgateway" ]; then
  cf_py="${CONTEXTFORGE_PYTHON:-/root/.pyenv/versions/3.12.1/bin/python}"
  [ -x "$cf_py" ] || cf_py=$(command -v python3.12) || { echo "no Python 3.12 for ContextForge: set CONTEXTFORGE_PYTHON" >&2; exit 1; }
  "$cf_py" -m venv "$cf"
  "$cf/bin/pip" install --quiet "mcp-contextforge-gateway==1.1.0"
fi
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq wrk >/dev/null
  else
    echo "wrk is missing: apt-get install wrk" >&2
    exit 1
  fi
fi
toolgate="${TOOLGATE_BIN:-}"
if [ -z "$toolgate" ]; then
  cargo build -q --release -p toolgate
  toolgate="$PWD/target/release/toolgate"
fi
exec "$py" bench/scripts/peers.py "$toolgate" "$PWD/$venv/bin" "$PWD/$cf/bin" "${1:-100}" "${2:-2000}"
