#!/usr/bin/env python3
"""bench/scaling.svg and the growth table of BENCHMARKS.md, from the rows
bench/scripts/scaling.sh gathers (`ROW stage tools configs ms`, one process
per size, doubling from 1,000 to 1,024,000 tools, 100 configurations).

Left: every stage's time against the tools, log-log, with the linear
reference (slope 1: twice the tools, twice the time). Right: each stage's
growth per doubling (t(2n) / t(n)); 2 is linear. Prints the growth table.
Needs matplotlib (`pip install matplotlib`).
"""
import collections
import pathlib
import statistics
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

STAGES = ["parse_registry", "parse_and_check", "lower", "load", "process_compile",
          "decide_by_name", "unavailable", "diff"]

rows = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/scaling.rows")
times = collections.defaultdict(dict)
for line in rows.read_text().splitlines():
    _, stage, tools, _configs, ms = line.split()
    times[stage][int(tools)] = float(ms)

fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.6))
growth = {}
for stage in STAGES:
    pts = sorted(times.get(stage, {}).items())
    if not pts:
        continue
    xs, ys = zip(*pts)
    a.plot(xs, ys, marker="o", markersize=3, label=stage)
    ratios = [(xs[i + 1], ys[i + 1] / ys[i]) for i in range(len(xs) - 1) if ys[i] > 0]
    if ratios:
        b.plot(*zip(*ratios), marker="o", markersize=3, label=stage)
        growth[stage] = ratios
# The linear reference, through the largest stage's first point.
first = max((sorted(v.items())[0] for v in times.values() if v), key=lambda p: p[1])
xs = sorted({x for v in times.values() for x in v})
a.plot(xs, [first[1] * x / first[0] for x in xs], "k--", linewidth=1, label="linear")
b.axhline(2.0, color="k", linestyle="--", linewidth=1, label="linear (2x)")
a.set_xscale("log")
a.set_yscale("log")
a.set_title("every stage against the tools (100 configurations)")
a.set_xlabel("tools")
a.set_ylabel("time (ms)")
b.set_xscale("log")
b.set_title("growth per doubling: t(2n) / t(n)")
b.set_xlabel("tools (the larger of the two)")
b.set_ylabel("ratio")
for ax in (a, b):
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
fig.tight_layout()
out = pathlib.Path(__file__).resolve().parent / "scaling.svg"
fig.savefig(out, metadata={"Date": None})
print(f"wrote {out}")

def shown(ms):
    for unit, scale in (("s", 1e3), ("ms", 1.0), ("µs", 1e-3)):
        if ms >= scale:
            return f"{ms / scale:.3g} {unit}"
    return f"{ms * 1e6:.3g} ns"


largest = max(xs)
print(f"| stage | at {largest:,} tools | growth per doubling, median of all steps | median from 128,000 tools up |")
print("| --- | ---: | ---: | ---: |")
for stage in STAGES:
    if stage not in growth:
        continue
    allr = [r for _, r in growth[stage]]
    big = [r for x, r in growth[stage] if x >= 128_000]
    tail = f"{statistics.median(big):.2f}x" if big else ""
    print(f"| {stage} | {shown(times[stage][max(times[stage])])} | {statistics.median(allr):.2f}x | {tail} |")
