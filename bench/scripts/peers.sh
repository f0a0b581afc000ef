#!/usr/bin/env bash
# BENCHMARKS.md, "Peer gateways side by side": direct, toolgate gateway and
# mcp-proxy 0.13.0 in one run with the official Python SDK client
# (bench/scripts/peers.py). Two venvs, since mcp-proxy pins mcp < 2: the
# client's and upstream's (mcp 2.3, TOOLGATE_MCP_BIN as .ci/run makes it),
# and the proxy's (target/peers-venv, made here).
# Usage: bench/scripts/peers.sh [TOOLS [CALLS]]   (default 100 2000)
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${TOOLGATE_MCP_BIN:?set TOOLGATE_MCP_BIN to the venv with mcp 2.3}/python"
venv=target/peers-venv
if [ ! -x "$venv/bin/mcp-proxy" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "mcp-proxy==0.13.0"
fi
cargo build -q --release -p toolgate
exec "$py" bench/scripts/peers.py "$PWD/target/release/toolgate" "$PWD/$venv/bin" "${1:-100}" "${2:-2000}"
