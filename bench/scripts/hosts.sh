#!/usr/bin/env bash
# Every host path side by side: on the SAME generated table per
# size (generate(N, 10, 42), 1,000 and 10,000 tools), one decision by name and
# the unavailable list of one context (config0, a user, consumer k0) through
# the Rust runtime, the C ABI from C, the Python binding, PHP FFI (tracing
# JIT), the Node package (napi-rs), the decision service over HTTP on
# 127.0.0.1, Cedar's is_authorized, Rego through Regorus, Casbin, and the
# plain-PHP, plain-Python and plain-JavaScript gates; and, for the hosts with
# a binding and the plain gates, a chat host's request (a new context, then
# the offered set and the unavailable list together). Each part first checks that it
# agrees with the runtime (decisions and list) and fails loudly otherwise,
# then prints `ROW path= op= n= ns= iters= reps=` lines; this script prints
# them as one markdown table. Release builds first (the abi3 wheel with
# maturin, as .ci/run does; the Node addon with napi; libtoolgate.so; the
# Cedar example), then the
# timed part, which is bounded (about 2 to 3 minutes on 2 cores; HOSTS_QUICK=1:
# short loops, a smoke run, not numbers).
#
#   bench/scripts/hosts.sh            # needs gcc, php-cli with FFI and opcache, python3 with venv, node and npm
#   HOSTS_QUICK=1 bench/scripts/hosts.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p "${CARGO_TARGET_DIR:-target}"
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
sizes="${HOSTS_SIZES:-1000 10000}"

need() { command -v "$1" >/dev/null || { echo "hosts.sh: $1 is required ($2)" >&2; exit 1; }; }
need gcc "apt-get install gcc"
need php "apt-get install php-cli php-opcache"
need python3 "apt-get install python3 python3-venv"
need node "apt-get install nodejs npm"
need npm "apt-get install nodejs npm"
# (the module list read whole first: `php -m | grep -q` can fail on SIGPIPE under pipefail)
php_modules="$(php -m)"
grep -qx FFI <<<"$php_modules" || { echo "hosts.sh: PHP's FFI extension is required" >&2; exit 1; }
grep -qx 'Zend OPcache' <<<"$php_modules" || { echo "hosts.sh: PHP's opcache (the JIT) is required: apt-get install php-opcache" >&2; exit 1; }

work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# ---- builds (not timed) -----------------------------------------------------
echo "building (release) ..." >&2
cargo build -q --release -p toolgate -p toolgate-c
cargo build -q --release -p toolgate-bench --features cedar,regorus,casbin --example hosts
gcc -std=c11 -O2 -Wall -Wextra -Werror -Ibindings/c/include bench/hosts/c_bench.c \
  -L"$target/release" -l:libtoolgate.so -Wl,-rpath,"$target/release" -o "$work/c_bench"
# The Python wheel of this commit: maturin in its own venv, the wheel into a fresh venv.
py="$target/hosts-python"
if [ ! -x "$py/build-venv/bin/maturin" ]; then
  python3 -m venv "$py/build-venv"
  "$py/build-venv/bin/pip" install --quiet "maturin==1.16.0"
fi
rm -rf "$py/wheels" "$py/venv"
CARGO_TARGET_DIR="$py/cargo" "$py/build-venv/bin/maturin" build --quiet --release \
  -m bindings/python/Cargo.toml -o "$py/wheels"
python3 -m venv "$py/venv"
"$py/venv/bin/pip" install --quiet --no-index "$py"/wheels/toolgate-*.whl

# The Node addon of this commit (napi-rs, release), with the package's pinned dev dependencies.
(cd bindings/node && npm ci --no-audit --no-fund --silent && CARGO_TARGET_DIR="$target/hosts-node" npx napi build --release --dts native.d.ts >/dev/null)

hosts="$target/release/examples/hosts"
toolgate="$target/release/toolgate"
php_jit=(php -d ffi.enable=true -d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M)

# The decision service on an ephemeral port of 127.0.0.1; sets $server and $addr.
serve() {
  "$toolgate" serve --table "$1" --no-watch --addr 127.0.0.1:0 2>"$work/serve.err" &
  server=$!
  addr=""
  for _ in $(seq 100); do
    addr="$(sed -n 's|.*listening on http://\([0-9.]*:[0-9]*\).*|\1|p' "$work/serve.err")"
    [ -n "$addr" ] && return 0
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  echo "hosts.sh: toolgate serve did not start:" >&2
  cat "$work/serve.err" >&2
  exit 1
}
stop() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }

# ---- the timed part -----------------------------------------------------------
start=$(date +%s)
uptime >&2
# Each part's ROW lines, gathered (and shown as they come).
part() { "$@" | tee -a "$work/rows.txt" >&2; }
# shellcheck disable=SC2086 # the sizes are words
"$hosts" gen "$work" $sizes
for n in $sizes; do
  t="$work/t$n.tgt"
  echo "--- $n tools" >&2
  part "$hosts" rust "$work" "$n"
  part "$work/c_bench" "$t" "$n"
  part env PYTHONDONTWRITEBYTECODE=1 "$py/venv/bin/python" bench/hosts/hosts.py "$t" "$n"
  part node bench/hosts/node_bench.js "$t" "$n"
  part env TOOLGATE_LIB="$target/release/libtoolgate.so" "${php_jit[@]}" bindings/php/bench/bench.php "$t" --rows "$n"
  serve "$t"
  part "$hosts" http "$work" "$n" "$addr"
  stop
  part "$hosts" cedar "$work" "$n"
  part "$hosts" regorus "$work" "$n"
  part "$hosts" casbin "$work" "$n"
done
uptime >&2
echo "timed part: $(($(date +%s) - start)) s" >&2

# ---- one markdown table ----------------------------------------------------------
python3 - "$work/rows.txt" "$sizes" "$(php -r 'echo PHP_VERSION;')" "$("$py/venv/bin/python" -c 'import sys; print(sys.version.split()[0])')" "$(node -p 'process.versions.node')" <<'PY'
import sys

rows_file, sizes, php, python, node = sys.argv[1], [int(s) for s in sys.argv[2].split()], sys.argv[3], sys.argv[4], sys.argv[5]
rows = {}
loops = {}
for line in open(rows_file):
    if not line.startswith("ROW "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    rows[(f["path"], f["op"], int(f["n"]))] = float(f["ns"])
    loops.setdefault((f["path"], f["op"]), []).append(f"{int(f['iters']):,} x {f['reps']} at {int(f['n']):,}")
PATHS = [
    ("rust", "Rust runtime: `Context::decide`, `Context::unavailable`; request: `offered`, `unavailable`"),
    ("c", "C ABI from C (gcc -O2): `toolgate_decide_packed`; `toolgate_unavailable_reasons` into (name, reason) entries"),
    ("c-many", "C ABI from C: `toolgate_decide_many`, 64 names a call, per name (no list form)"),
    ("python", f"Python {python}, the abi3 wheel: `ctx.decide`, `ctx.unavailable()`; request: `offered()`, `unavailable()`"),
    ("php", f"PHP {php} FFI, tracing JIT: `decide` (`Decision`, kept by the context), `unavailableColumns()` (kept by the context); request: `offered()`, `unavailableColumns()`"),
    ("php-many", f"PHP {php} FFI: `decideMany`, 64 names a call, per name (no list form)"),
    ("node", f"Node {node}, napi-rs: `ctx.decide`, `ctx.unavailable()` (kept by the context); request: `offered()`, `unavailable()`"),
    ("node-packed", f"Node {node}: `ctx.unavailablePacked()`, one `Uint32Array` (no decide form)"),
    ("http", "decision service, HTTP/1.1 keep-alive on 127.0.0.1 (p50): `/access/v1/evaluation`, `/toolgate/v1/unavailable`"),
    ("cedar", "Cedar `is_authorized` (request built beforehand); list: one request per tool"),
    ("regorus", "Rego, Regorus's VM (`set_input` + `execute`, input built beforehand); list: one evaluation per tool"),
    ("casbin", "Casbin `Enforcer::enforce` (request built beforehand); list: one request per tool"),
    ("plain-php", "plain PHP `PlainGate`, tracing JIT; request: every tool decided once, split"),
    ("plain-python", "plain Python `plain_gate.py`; request: the same"),
    ("plain-js", f"plain JavaScript `plain_gate.js`, Node {node}; request: the same"),
]
# The operations a path does not time (their cells show "—").
ONE_OP = {("c-many", "unavailable"), ("php-many", "unavailable"), ("node-packed", "decide")}
ONE_OP |= {(p, "request") for p in ("c", "c-many", "php-many", "node-packed", "http", "cedar", "regorus", "casbin")}
def fmt(ns):
    if ns is None:
        return "—"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"
cols = [(op, n) for op in ("decide", "unavailable", "request") for n in sizes]
print("| path | " + " | ".join(f"{op} at {n:,}" for op, n in cols) + " |")
print("| --- |" + " ---: |" * len(cols))
missing = []
for key, label in PATHS:
    cells = [rows.get((key, op, n)) for op, n in cols]
    missing += [f"{key} {op} {n}" for (op, n), c in zip(cols, cells) if c is None and (key, op) not in ONE_OP]
    print(f"| {label} | " + " | ".join(fmt(c) for c in cells) + " |")
print()
print("Loop sizes (calls per timed repetition x repetitions, after one warm-up repetition; each cell the median):")
for key, _ in PATHS:
    for op in ("decide", "unavailable", "request"):
        if (key, op) not in ONE_OP:
            print(f"- {key} {op}: " + "; ".join(loops.get((key, op), ["none"])))
if missing:
    print("hosts.sh: missing rows: " + ", ".join(missing), file=sys.stderr)
    sys.exit(1)
PY
