"""BENCHMARKS.md, "Python": one run, side by side, on the same tables,
context (config0, a user, MCP consumer k0) and names.

- one decision: Rust (the runtime, bench/rust), Python through the binding,
  and the plain-Python gate (tests/plain_gate.py, checked against the
  conformance corpus), on 1,000- and 10,000-tool tables;
- the unavailable list over every tool, the same three ways;
- a tools/call round trip through the MCP proxy vs straight to the upstream.

Usage: python bench/bench.py [--out DIR]   (needs the wheel installed, the
`toolgate` CLI ($TOOLGATE_BIN or built here) and cargo for the Rust column).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

import toolgate  # noqa: E402
from conftest import _toolgate_bin  # noqa: E402
from plain_gate import PlainGate  # noqa: E402
from timing import best_ns  # noqa: E402
from workload import write_project  # noqa: E402

ARGS = ("config0", "user", "k0", None, None)


def rust_bench(table: Path, names: Path) -> dict[str, float]:
    target = os.environ.get("CARGO_TARGET_DIR")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "toolgate-python-bench"], cwd=ROOT, check=True)
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    import json

    exe = Path(target or json.loads(meta)["target_directory"]) / "release" / "toolgate-python-bench"
    out = subprocess.run([str(exe), str(table), str(names)], check=True, capture_output=True, text=True).stdout
    rows = dict(line.split("\t", 1) for line in out.splitlines())
    return {"check": rows["check"], "decide": float(rows["decide"]), "unavailable": float(rows["unavailable"])}  # type: ignore[dict-item]


def fmt(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


def tables(out: Path) -> dict[int, tuple[toolgate.Table, Path, Path]]:
    cli = _toolgate_bin()
    got = {}
    for n in (1000, 10000):
        d = out / f"w{n}"
        write_project(d, n)
        tgt = d / "policy.tgt"
        subprocess.run([str(cli), "compile", str(d), "-o", str(tgt)], check=True, capture_output=True)
        t = toolgate.Table.load(tgt)
        names = d / "names.txt"
        names.write_text("".join(t.tools[(i * 7919) % n] + "\n" for i in range(n)))
        got[n] = (t, tgt, names)
    return got


def gates(out: Path) -> list[str]:
    rows = []
    for n, (t, tgt, names_file) in tables(out).items():
        names = names_file.read_text().split()
        ctx = t.context("config0", role="user", consumer="k0")
        gate = PlainGate(t.policy())
        # The three agree before anything is timed.
        assert [ctx.decide(x).allowed for x in names] == [gate.decide(x, *ARGS)[0] for x in names]
        assert ctx.unavailable() == gate.unavailable(*ARGS)
        rust = rust_bench(tgt, names_file)
        allowed = sum(ctx.is_allowed(x) for x in names)
        assert rust["check"] == f"{allowed}\t{ctx.unavailable_count()}", (rust["check"], allowed)

        decide = ctx.decide
        plain = gate.decide
        seq = names * max(1, 100_000 // n)

        def loop_only() -> None:
            for x in seq:
                pass

        def binding() -> None:
            for x in seq:
                decide(x)

        def plain_py() -> None:
            for x in seq:
                plain(x, "config0", "user", "k0", None, None)

        def cold() -> None:
            # A new context, then every tool once: no decision object is cached yet.
            d = t.context("config0", role="user", consumer="k0").decide
            for x in names:
                d(x)

        cold_ns = best_ns(cold, len(names))
        empty = best_ns(loop_only, len(seq))
        py = best_ns(binding, len(seq))
        pl = best_ns(plain_py, len(seq))
        k = 2000 if n == 1000 else 300
        def listed() -> None:
            for _ in range(k):
                ctx.unavailable()

        un_py = best_ns(listed, k)
        un_plain = best_ns(lambda: gate.unavailable(*ARGS), 1, repeat=5)
        rows.append(
            f"| {n:,} | {fmt(rust['decide'])} | {fmt(py)} ({fmt(py - empty)} net of the loop) | {fmt(cold_ns)} | {fmt(pl)} | "
            f"{fmt(rust['unavailable'])} | {fmt(un_py)} | {fmt(un_plain)} | {un_plain / un_py:,.0f}x |"
        )
    return rows


async def _timed_calls(s: Any, calls: int) -> list[int]:
    """50 warm-up calls of an allowed tool, then `calls` timed ones (ns each)."""
    for _ in range(50):
        await s.call_tool("get_help_article", {"query": "warm"})
    times: list[int] = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        await s.call_tool("get_help_article", {"query": "q"})
        times.append(time.perf_counter_ns() - t0)
    return times


async def _embedded_round_trips(upstream_params: Any, table: Path, calls: int) -> float:
    """The proxy in the client's process (memory streams, the SDK's own
    in-memory transport), upstream over stdio: the proxy without a process hop."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    from mcp.shared.memory import create_connected_server_and_client_session

    from toolgate.mcp import GoverningProxy

    async with stdio_client(upstream_params) as (r, w), ClientSession(r, w) as up:
        await up.initialize()
        proxy = GoverningProxy(up, toolgate.Table.load(table), "support-chat", role="user", consumer="support-bot")
        async with create_connected_server_and_client_session(proxy.server) as s:
            return statistics.median(await _timed_calls(s, calls))


async def _round_trips(params: Any, calls: int) -> list[float]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        times = await _timed_calls(s, calls)
        refused = []
        for _ in range(calls // 4 if "toolgate.mcp" in params.args else 0):
            t0 = time.perf_counter_ns()
            try:
                await s.call_tool("refund.issue", {"query": "q"})
            except Exception:  # noqa: BLE001 - the refusal is the point
                pass
            refused.append(time.perf_counter_ns() - t0)
        return [statistics.median(times), statistics.median(refused) if refused else 0.0]


def proxy_rows() -> list[str]:
    from mcp import StdioServerParameters

    upstream = [str(ROOT / "tests/upstream_server.py")]
    env = dict(os.environ)
    env.pop("UPSTREAM_LOG", None)
    direct = StdioServerParameters(command=sys.executable, args=upstream, env=env)
    proxied = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolgate.mcp", "--table", str(ROOT.parents[1] / "conformance/tables/mcp-profiles.tgt"),
              "--configuration", "support-chat", "--consumer", "support-bot", "--", sys.executable, *upstream],
        env=env,
    )
    calls = 400
    d, _ = asyncio.run(_round_trips(direct, calls))
    p, refused = asyncio.run(_round_trips(proxied, calls))
    embedded = asyncio.run(
        _embedded_round_trips(direct, ROOT.parents[1] / "conformance/tables/mcp-profiles.tgt", calls)
    )
    # The governing itself, in process: what the proxy does per tools/call
    # besides the MCP hop (its context for the request's consumer, the
    # decision; a refusal adds the typed refusal and its JSON-RPC error).
    from toolgate.mcp import error_for

    handle = toolgate.TableHandle(toolgate.Table.load(ROOT.parents[1] / "conformance/tables/mcp-profiles.tgt"))

    def govern() -> None:
        for _ in range(10_000):
            handle.current().context("support-chat", role="user", consumer="support-bot").decide("get_help_article")

    def govern_refused() -> None:
        for _ in range(2_000):
            ctx = handle.current().context("support-chat", role="user", consumer="support-bot")
            error_for(ctx.refusal(ctx.decide("refund.issue")))  # type: ignore[arg-type]

    g = best_ns(govern, 10_000)
    gr = best_ns(govern_refused, 2_000)
    return [
        f"| straight to the upstream (stdio) | {fmt(d)} |",
        f"| through `python -m toolgate.mcp` (stdio to the proxy, stdio to the upstream) | {fmt(p)} |",
        f"| added by the proxy | {fmt(p - d)} |",
        f"| a refused call, answered by the proxy (never forwarded) | {fmt(refused)} |",
        f"| through the proxy in the client's process (SDK memory transport), upstream over stdio | {fmt(embedded)} |",
        f"| added by the embedded proxy | {fmt(embedded - d)} |",
        f"| the governing alone, in process: table, context, decision (allowed call) | {fmt(g)} |",
        f"| the governing alone, in process: ... plus the typed refusal and its JSON-RPC error | {fmt(gr)} |",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/toolgate-python-bench")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"Python {sys.version.split()[0]}, toolgate {toolgate.__version__}\n")
    print("| tools | decide: Rust | decide: Python (binding) | decide: Python, cold context | decide: plain Python | unavailable: Rust | unavailable: Python (binding) | unavailable: plain Python | plain / binding |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in gates(out):
        print(r)
    print("\n| tools/call round trip (median of 400) | time |\n| --- | ---: |")
    for r in proxy_rows():
        print(r)


if __name__ == "__main__":
    main()
