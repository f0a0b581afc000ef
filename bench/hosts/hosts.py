"""The Python paths of bench/scripts/hosts.sh: the binding
(`Context.decide`, `Context.unavailable`) and the plain-Python gate
(bindings/python/tests/plain_gate.py) on the table hosts.sh generated.

Usage: python hosts.py TABLE.tgt N   (the runtime's answers in TABLE's
.tools.tsv twin; HOSTS_QUICK=1 shortens the loops). Checks both against the
runtime before timing (exit 1 on any difference), then prints ROW lines.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings/python/tests"))
sys.path.insert(0, str(ROOT / "bindings/python/bench"))

import toolgate  # noqa: E402
from plain_gate import PlainGate  # noqa: E402
from timing import best_ns  # noqa: E402

QUICK = os.environ.get("HOSTS_QUICK", "") not in ("", "0")
REPS = 5 if QUICK else 7
ARGS = ("config0", "user", "k0", None, None)


def iters(full: int) -> int:
    return max(1, full // 20 if QUICK else full)


def row(path: str, op: str, n: int, ns: float, count: int) -> None:
    print(f"ROW path={path} op={op} n={n} ns={ns:.1f} iters={count} reps={REPS}", flush=True)


def fail(what: str) -> None:
    print(f"hosts.py: {what}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    if len(sys.argv) != 3 or not sys.argv[1].endswith(".tgt"):
        fail("usage: hosts.py TABLE.tgt N")
    table_path, n = Path(sys.argv[1]), int(sys.argv[2])
    rows = [line.split("\t") for line in table_path.with_suffix(".tools.tsv").read_text().splitlines()]
    if len(rows) != n or any(len(r) != 4 for r in rows):
        fail(f"{table_path}: not {n} lines of `name allowed reason listed`")
    names = [r[0] for r in rows]
    want = [(r[1] == "1", None if r[2] == "-" else r[2]) for r in rows]
    want_list = [(r[0], r[2]) for r in rows if r[3] == "1"]

    t = toolgate.Table.load(table_path)
    ctx = t.context("config0", role="user", consumer="k0")
    gate = PlainGate(t.policy())
    for name, w in zip(names, want):
        d = ctx.decide(name)
        if (d.allowed, d.reason) != w:
            fail(f"{name}: the binding decides {(d.allowed, d.reason)}, the runtime {w}")
        if gate.decide(name, *ARGS)[:2] != w:
            fail(f"{name}: the plain gate decides {gate.decide(name, *ARGS)}, the runtime {w}")
    if ctx.unavailable() != want_list:
        fail("the binding's unavailable list differs from the runtime's")
    if gate.unavailable(*ARGS) != want_list:
        fail("the plain gate's unavailable list differs from the runtime's")

    seq = [names[((k + 1) * 7919) % n] for k in range(n)]  # the order of bench/src/lib.rs walk()
    decide, plain = ctx.decide, gate.decide

    def timed_decide(passes: int) -> Callable[[], None]:
        def f() -> None:
            for _ in range(passes):
                for x in seq:
                    decide(x)
        return f

    def timed_plain(passes: int) -> Callable[[], None]:
        def f() -> None:
            for _ in range(passes):
                for x in seq:
                    plain(x, "config0", "user", "k0", None, None)
        return f

    def timed_list(k: int, f: Callable[[], Any]) -> Callable[[], None]:
        def g() -> None:
            for _ in range(k):
                f()
        return g

    passes = -(-iters(200_000) // n)
    row("python", "decide", n, best_ns(timed_decide(passes), passes * n, REPS), passes * n)
    k = iters(2_000_000 // n)
    row("python", "unavailable", n, best_ns(timed_list(k, ctx.unavailable), k, REPS), k)
    passes = -(-iters(50_000) // n)
    row("plain-python", "decide", n, best_ns(timed_plain(passes), passes * n, REPS), passes * n)
    k = iters(max(5, 20_000 // n))
    row("plain-python", "unavailable", n, best_ns(timed_list(k, lambda: gate.unavailable(*ARGS)), k, REPS), k)

    # A chat host's request: a new context, then every registered tool (the
    # offered set and the unavailable list together), checked first.
    offered_want = [r[0] for r in rows if r[1] == "1"]

    def request() -> Any:
        c = t.context("config0", role="user", consumer="k0")
        return c.offered(), c.unavailable()

    if request() != (offered_want, want_list):
        fail("a request's offered set or unavailable list differs from the runtime's")
    policy = t.policy()
    visible = policy["remoteVisibility"] == "everyone"  # the context's role is a user
    remote = {tool["name"]: tool["remote"] for tool in policy["tools"]}

    def plain_request() -> Any:
        offered, out = [], []
        for name in names:
            allowed, reason = plain(name, "config0", "user", "k0", None, None)[:2]
            if allowed:
                offered.append(name)
            elif visible or not remote[name]:
                out.append((name, reason))
        return offered, out

    if plain_request() != (offered_want, want_list):
        fail("the plain gate's request differs from the runtime's")
    k2 = iters(max(5, 2_000_000 // n))
    row("python", "request", n, best_ns(timed_list(k2, request), k2, REPS), k2)
    row("plain-python", "request", n, best_ns(timed_list(k, plain_request), k, REPS), k)


if __name__ == "__main__":
    main()
