#!/usr/bin/env bash
# BENCHMARKS.md, "The MCP gateway": one gateway serving three configurations
# against three gateways serving one each, in front of the same stdio
# upstream (the gateway tests' CRM server on the official Python SDK):
# resident memory after start and upstream processes.
# Usage: bench/scripts/gateway_configs.sh  (needs target/release/toolgate and
# TOOLGATE_MCP_BIN with the mcp package, as .ci/run installs it)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${TOOLGATE_BIN:-target/release/toolgate}"
py="${TOOLGATE_MCP_BIN:?set TOOLGATE_MCP_BIN to the venv with mcp}/python"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
fixture=gateway/tests/fixtures
mkdir -p "$work/project"
cat > "$work/project/toolgate.toml" <<'T'
registry = "registry.toml"
policies = ["policy.tg"]
T
# The test policy, with two more configurations of the same tools.
{ cat "$fixture/policy.tg"; printf '\nconfiguration billing-chat {\n  groups [mcp_crm]\n}\n\nconfiguration audit-chat {\n  groups [mcp_crm]\n}\n'; } > "$work/project/policy.tg"
"$bin" registry import-mcp --server crm -o "$work/project/registry.toml" -- "$py" "$fixture/crm_server.py" 2>/dev/null
sed -i 's/admin_only = true/admin_only = false/; s/enabled = false/enabled = true/' "$work/project/registry.toml"
gateway() { # NAME PORT CONFIGURATION [MORE...]
  local name=$1 port=$2 first=$3; shift 3
  local more=""; [ $# -gt 0 ] && more="configurations = [$(printf '"%s",' "$@" | sed 's/,$//')]"
  cat > "$work/$name.toml" <<G
listen = "127.0.0.1:$port"
project = "$work/project"
registry = "$work/project/registry.toml"
configuration = "$first"
$more
[identity]
role = "user"
[[upstream]]
name = "crm"
command = ["$py", "$PWD/$fixture/crm_server.py"]
G
  "$bin" gateway --config "$work/$name.toml" --no-watch 2> "$work/$name.log" &
  for _ in $(seq 100); do grep -q listening "$work/$name.log" && return 0; sleep 0.1; done
  cat "$work/$name.log"; exit 1
}
rss_of() { # PID: the gateway's RSS and its upstream processes' (KiB)
  local own kids
  own=$(ps -o rss= -p "$1")
  kids=$(ps -o rss= --ppid "$1" | awk '{s+=$1} END {print s+0}')
  echo "$own $kids $(ps -o pid= --ppid "$1" | wc -l)"
}
gateway one 38100 support-chat billing-chat audit-chat; one=$!
sleep 1
read -r own kids n <<<"$(rss_of $one)"
echo "| one gateway, 3 configurations | $((own / 1024)) MiB | $n | $((kids / 1024)) MiB |"
kill $one; wait $one 2>/dev/null || true
total=0; ktotal=0; ntotal=0
for c in support-chat billing-chat audit-chat; do
  gateway "g-$c" $((38200 + ntotal)) "$c"; pid=$!
  sleep 1
  read -r own kids n <<<"$(rss_of $pid)"
  total=$((total + own)); ktotal=$((ktotal + kids)); ntotal=$((ntotal + n))
done
echo "| three gateways, 1 configuration each | $((total / 1024)) MiB | $ntotal | $((ktotal / 1024)) MiB |"
