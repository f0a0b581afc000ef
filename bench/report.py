#!/usr/bin/env python3
"""Print the tables of BENCHMARKS.md from criterion's results in target/criterion
(after the `decide`, `cedar` and `stages` benches have run)."""
import json
import pathlib

C = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"


def med(*parts):
    f = C.joinpath(*parts, "new", "estimates.json")
    if not f.exists():
        return None
    return json.loads(f.read_text())["median"]["point_estimate"]  # ns


def fmt(ns):
    if ns is None:
        return "—"
    if ns < 1e3:
        return f"{ns:.1f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.2f} s"


def ratio(a, b):
    return "—" if a is None or b is None else f"{b / a:,.0f}x"


print("### One decision: toolgate `decide` vs Cedar `is_authorized` vs the naive reference\n")
print("| tools | toolgate (by name) | toolgate (by index) | Cedar | reference | Cedar / toolgate |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for n in [100, 1000, 10000]:
    t = med("cedar_decide", "toolgate", str(n))
    i = med("decide", "table_by_id", str(n))
    c = med("cedar_decide", "cedar", str(n))
    r = med("cedar_decide", "reference", str(n))
    print(f"| {n:,} | {fmt(t)} | {fmt(i)} | {fmt(c)} | {fmt(r)} | {ratio(t, c)} |")

print("\n### The unavailable list over every tool\n")
print("| tools | toolgate (names) | toolgate (ids) | Cedar, one request per tool | reference | Cedar / toolgate |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for n in [100, 1000, 10000]:
    t = med("cedar_unavailable", "toolgate", str(n))
    i = med("unavailable", "table_ids", str(n))
    c = med("cedar_unavailable", "cedar", str(n))
    r = med("cedar_unavailable", "reference", str(n))
    print(f"| {n:,} | {fmt(t)} | {fmt(i)} | {fmt(c)} | {fmt(r)} | {ratio(t, c)} |")

print("\n### Offered set\n")
print("| tools | ids | count only |")
print("| ---: | ---: | ---: |")
for n in [100, 1000, 10000]:
    print(f"| {n:,} | {fmt(med('offered', 'table', str(n)))} | {fmt(med('offered', 'table_count', str(n)))} |")

sizes = ["1000x100", "10000x100", "100000x100", "10000x10", "10000x1000", "100000x1000"]
print("\n### Every stage (tools x configurations)\n")
print("| stage | " + " | ".join(sizes) + " |")
print("| --- |" + " ---: |" * len(sizes))
for st in ["parse_registry", "parse_policy", "check", "lower", "load", "diff", "process_check", "process_compile"]:
    print(f"| {st} | " + " | ".join(fmt(med("stage", st, s)) for s in sizes) + " |")
print(f"\nclassify, all 11 gateway fixtures: {fmt(med('classify_all_fixtures'))}")

# Rounds three and four: one decision and the list, 1k to 1M tools,
# with the name lookup alone beside it, and Cedar side by side where it ran.
sizes = [1000, 10000, 100000, 1000000]
print("\n### One decision and the unavailable list, 1k to 1M tools\n")
print("| tools | by index | lookup alone | by name | by name, 64 a call (per name) | unavailable (index, reason) | unavailable (names) |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n in sizes:
    many = med("decide", "table_by_name_many64", str(n))
    cells = [
        med("decide", "table_by_id", str(n)),
        med("decide", "table_lookup_by_name", str(n)),
        med("decide", "table_by_name", str(n)),
        None if many is None else many / 64,
        med("unavailable", "table_ids", str(n)),
        med("unavailable", "table", str(n)),
    ]
    print(f"| {n:,} | " + " | ".join(fmt(c) for c in cells) + " |")
print("\n| tools | toolgate `decide` by name | `decide_many`, per name | Cedar `is_authorized` | Cedar / `decide` | Cedar / `decide_many` |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for n in sizes[:3]:
    t = med("cedar_decide", "toolgate", str(n))
    m = med("cedar_decide", "toolgate_many64", str(n))
    m = None if m is None else m / 64
    c = med("cedar_decide", "cedar", str(n))
    print(f"| {n:,} | {fmt(t)} | {fmt(m)} | {fmt(c)} | {ratio(t, c)} | {ratio(m, c)} |")
