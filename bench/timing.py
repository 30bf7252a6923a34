"""Timing the benchmarks share: one call in milliseconds, a median and p95 of samples,
a failed call refused, and the loops that time named plans and writes."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Milliseconds taken by one call, and its result."""
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000, result


def summary(samples: list[float]) -> dict[str, float]:
    """Median and 95th percentile of millisecond samples."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median": round(statistics.median(ordered), 3), "p95": round(p95, 3), "n": len(ordered)}


def check(result: Any, what: str) -> Any:
    """Refuse to time a call that failed."""
    if isinstance(result, dict) and "error" in result:
        raise SystemExit(f"{what} answered an error: {result['error']}")
    return result


def time_plans(plans: dict[str, Callable[[], Any]], rounds: int) -> dict[str, dict[str, float]]:
    """Each plan once to warm up, then ``rounds`` timed calls: median and p95 by name."""
    out = {}
    for name, fn in plans.items():
        fn()
        samples = []
        for _ in range(rounds):
            ms, result = timed(fn)
            check(result, name)
            samples.append(ms)
        out[name] = summary(samples)
    return out


def time_writes(
    calls: dict[str, Callable[[int], Any]], rounds: int, *, warm: int | None = None
) -> dict[str, dict[str, float]]:
    """``rounds`` timed calls of each write (the i-th call writes node i), after one
    untimed call of node ``warm`` when given: median and p95 by name."""
    out = {}
    for name, fn in calls.items():
        if warm is not None:
            fn(warm)
        samples = []
        for i in range(rounds):
            ms, result = timed(lambda i=i, fn=fn: fn(i))
            check(result, name)
            samples.append(ms)
        out[name] = summary(samples)
    return out
