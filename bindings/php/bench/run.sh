#!/usr/bin/env bash
# BENCHMARKS.md, "Hosts: C ABI and PHP FFI": both halves in one run, release builds.
set -euo pipefail
cd "$(dirname "$0")/../../.."
target="${CARGO_TARGET_DIR:-target}"
cargo build -q --release -p toolgate-c
cargo run -q --release -p toolgate-bench --example ffi_side_by_side -- /tmp/toolgate-ffi-bench.tgt 1000
TOOLGATE_LIB="$target/release/libtoolgate.so" php -d ffi.enable=true -d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M \
  bindings/php/bench/bench.php /tmp/toolgate-ffi-bench.tgt
echo "--- without the JIT"
TOOLGATE_LIB="$target/release/libtoolgate.so" php -d ffi.enable=true bindings/php/bench/bench.php /tmp/toolgate-ffi-bench.tgt
