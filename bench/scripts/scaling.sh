#!/usr/bin/env bash
# BENCHMARKS.md, "Growth": every stage from 1,000 to 1,024,000 tools, doubling,
# 100 configurations, one process per size (bench/examples/scale.rs), plus a
# cold `toolgate compile` process over the same workload written as a project.
# Writes the rows to target/scaling.rows, then bench/scaling.svg and the
# growth table (bench/plot.py; needs matplotlib).
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
cargo build -q --release -p toolgate-bench --example scale --example dump
cargo build -q --release -p toolgate --bin toolgate
rows="$target/scaling.rows"
: > "$rows"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for k in $(seq 0 "${SCALING_STEPS:-10}"); do
  n=$((1000 << k))
  TOOLGATE_ROWS=1 "$target/release/examples/scale" "$n" 100 | grep '^ROW' >> "$rows"
  "$target/release/examples/dump" "$n" 100 "$work/p"
  start=$(date +%s%N)
  "$target/release/toolgate" compile "$work/p" -o "$work/t.tgt" -q 2>/dev/null || true
  test -s "$work/t.tgt" || { echo "toolgate compile wrote no table at $n tools" >&2; exit 1; }
  echo "ROW process_compile $n 100 $(( ($(date +%s%N) - start) / 1000 )).0e-3" >> "$rows"
  rm -rf "$work/p" "$work/t.tgt"
  echo "$n tools done" >&2
done
python3 bench/plot.py "$rows"
