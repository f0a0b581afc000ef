#!/usr/bin/env python3
"""Scaling plot for BENCHMARKS.md from criterion's results (target/criterion).

Run after `cargo bench -p toolgate-bench --bench stages`; writes bench/scaling.svg.
Needs matplotlib (`pip install matplotlib`).
"""
import json
import pathlib

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion" / "stage"
STAGES = ["parse_registry", "parse_policy", "check", "lower", "load", "diff", "process_check", "process_compile"]


def median_ms(stage, size):
    f = ROOT / stage / size / "new" / "estimates.json"
    if not f.exists():
        return None
    return json.loads(f.read_text())["median"]["point_estimate"] / 1e6


fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
for stage in STAGES:
    xs, ys = [], []
    for tools in [1000, 10000, 100000]:
        m = median_ms(stage, f"{tools}x100")
        if m is not None:
            xs.append(tools)
            ys.append(m)
    if xs:
        a.plot(xs, ys, marker="o", label=stage)
    xs, ys = [], []
    for configs in [10, 100, 1000]:
        m = median_ms(stage, f"10000x{configs}")
        if m is not None:
            xs.append(configs)
            ys.append(m)
    if xs:
        b.plot(xs, ys, marker="o", label=stage)
for ax, title, xlabel in [(a, "tools (100 configurations)", "tools"), (b, "configurations (10,000 tools)", "configurations")]:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("median time (ms)")
    ax.grid(True, which="both", alpha=0.3)
a.legend(fontsize=7)
fig.tight_layout()
out = pathlib.Path(__file__).resolve().parent / "scaling.svg"
fig.savefig(out, metadata={"Date": None})
print(f"wrote {out}")
