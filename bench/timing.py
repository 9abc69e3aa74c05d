"""Timing on the host: warm-up, repeated runs, medians and spread, rotated inputs.

Small inputs are rotated across several copies so a run does not just measure a warm cache.
Results are checked against numpy before anything is timed.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, List, Sequence


def time_call(fn: Callable, input_sets: Sequence[tuple], min_time: float = 0.2,
              max_repeats: int = 200, min_repeats: int = 5, warmup: int = 2) -> List[float]:
    """Seconds per call of ``fn(*inputs)``, cycling through ``input_sets``.  Each sample times
    a batch of calls sized so one sample is at least ~1 ms (timer resolution)."""
    for i in range(warmup):
        fn(*input_sets[i % len(input_sets)])
    t0 = time.perf_counter()
    fn(*input_sets[0])
    one = max(time.perf_counter() - t0, 1e-7)
    batch = max(1, int(1e-3 / one))
    samples: List[float] = []
    deadline = time.perf_counter() + min_time
    k = 0
    while len(samples) < min_repeats or (time.perf_counter() < deadline and len(samples) < max_repeats):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(*input_sets[k % len(input_sets)])
            k += 1
        samples.append((time.perf_counter() - t0) / batch)
    return samples


def summarize(samples: List[float]) -> dict:
    s = sorted(samples)
    q = lambda f: s[min(len(s) - 1, int(f * (len(s) - 1) + 0.5))]
    return {"median_s": statistics.median(s), "p10_s": q(0.1), "p90_s": q(0.9),
            "repeats": len(s)}
