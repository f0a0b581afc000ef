"""The timing loop of the Python benches (bench.py and bench/hosts/hosts.py)."""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any, Callable


def best_ns(f: Callable[[], Any], ops: int, repeat: int = 7) -> float:
    """Median over `repeat` runs of f (which does `ops` operations), ns per op,
    after one untimed warm-up run; the collector is off while a run is timed."""
    f()
    runs = []
    for _ in range(repeat):
        gc.disable()
        t0 = time.perf_counter_ns()
        f()
        runs.append((time.perf_counter_ns() - t0) / ops)
        gc.enable()
    return statistics.median(runs)
