#!/usr/bin/env bash
# The decision service under load (BENCHMARKS.md, "The decision service"):
# the demo table served by a release `toolgate serve` on 127.0.0.1, the load
# generator (bench/examples/serve_load.rs) on the same cores. Bounded: each
# run lasts SECONDS (default 10), then the server is stopped by its pid.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-10}"
port="${PORT:-18181}"
target="${CARGO_TARGET_DIR:-target}"
cargo build -q --release -p toolgate
cargo build -q --release -p toolgate-bench --example serve_load
table="$(mktemp -d)/demo.tgt"
"$target/release/toolgate" compile policies/demo -o "$table"
"$target/release/toolgate" serve --table "$table" --no-watch --addr "127.0.0.1:$port" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.1
done
load="$target/release/examples/serve_load"
uptime
"$load" --addr "127.0.0.1:$port" --mode single --connections 32 --seconds "$seconds"
"$load" --addr "127.0.0.1:$port" --mode batch --batch 100 --connections 8 --seconds "$seconds"
"$load" --addr "127.0.0.1:$port" --mode batch --batch 100 --connections 8 --seconds "$seconds" --no-refusals
