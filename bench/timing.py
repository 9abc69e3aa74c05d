"""Timing: warm-up, repeated runs, medians and spread, rotated inputs, and a progress bar.

Small inputs are rotated across several copies (``rotations``) so that a run does not measure
one array sitting in L1.  Each host sample times a batch of calls sized so that a sample lasts
at least ~1 ms (timer resolution); a GPU sample is one call between two device events
(``bench/cuda.py``).  Results are checked before anything is timed (``bench/common.py``).
"""
from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence


@dataclass(frozen=True)
class TimingPolicy:
    min_time_s: float      # keep sampling at least this long ...
    min_repeats: int       # ... and at least this many samples
    max_repeats: int
    warmup_calls: int = 1  # untimed calls after the (checked) first call
    max_time_s: float = 8.0          # slow calls: stop here once 3 samples are in
    rotation_bytes: int = 64 << 20   # rotate input copies up to about this many bytes
    max_rotations: int = 16

    def rotations(self, set_bytes: int) -> int:
        return max(1, min(self.max_rotations, self.rotation_bytes // max(set_bytes, 1)))

    def as_dict(self) -> dict:
        return dict(self.__dict__)


QUICK = TimingPolicy(min_time_s=0.03, min_repeats=5, max_repeats=30, max_time_s=1.0)
FULL = TimingPolicy(min_time_s=0.4, min_repeats=7, max_repeats=200, max_time_s=8.0)


def time_call(fn: Callable, input_sets: Sequence[tuple], policy: TimingPolicy) -> List[float]:
    """Seconds per call of ``fn(*inputs)``, cycling through ``input_sets``."""
    t0 = time.perf_counter()
    for i in range(max(1, policy.warmup_calls)):
        fn(*input_sets[i % len(input_sets)])
    one = max((time.perf_counter() - t0) / max(1, policy.warmup_calls), 1e-7)
    batch = max(1, int(1e-3 / one))
    samples: List[float] = []
    start = time.perf_counter()
    k = 0
    while True:
        elapsed = time.perf_counter() - start
        enough = len(samples) >= policy.min_repeats or (len(samples) >= 3
                                                        and elapsed > policy.max_time_s)
        if enough and (elapsed >= policy.min_time_s or len(samples) >= policy.max_repeats):
            break
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(*input_sets[k % len(input_sets)])
            k += 1
        samples.append((time.perf_counter() - t0) / batch)
    return samples


def time_interleaved(fns: Dict[str, Callable], input_sets: Sequence[tuple],
                     policy: TimingPolicy) -> Dict[str, List[float]]:
    """Seconds per call of each ``fns[mode](*inputs)``, sampled in rounds: in each round every
    mode samples for a slice of ``min_time_s / min_repeats`` (one sample at least), the order
    rotated from round to round.  A burst of load from a neighbour on a shared VM (10-30%
    swings over seconds here) then lands on all modes alike instead of on whichever one was
    being timed, so the ratios between modes are steadier than their absolute times.
    ``min_repeats`` rounds, so each mode gets ``min_time_s``; a mode whose calls are slow
    stops the run after 3 rounds once it has spent ``max_time_s``."""
    modes = list(fns)
    batch: Dict[str, int] = {}
    for m in modes:     # warm-up, and a batch per sample long enough for the timer
        t0 = time.perf_counter()
        for i in range(max(1, policy.warmup_calls)):
            fns[m](*input_sets[i % len(input_sets)])
        one = max((time.perf_counter() - t0) / max(1, policy.warmup_calls), 1e-7)
        batch[m] = max(1, int(1e-3 / one))
    samples: Dict[str, List[float]] = {m: [] for m in modes}
    spent = dict.fromkeys(modes, 0.0)
    slice_s = policy.min_time_s / max(1, policy.min_repeats)
    k = 0
    for rounds in range(policy.max_repeats):
        if rounds >= 3 and max(spent.values(), default=0.0) > policy.max_time_s:
            break
        if rounds >= policy.min_repeats and all(spent[m] >= policy.min_time_s for m in modes):
            break
        for j in range(len(modes)):
            m = modes[(rounds + j) % len(modes)]
            fn, n, here = fns[m], batch[m], 0.0
            while True:
                t0 = time.perf_counter()
                for _ in range(n):
                    fn(*input_sets[k % len(input_sets)])
                    k += 1
                dt = time.perf_counter() - t0
                samples[m].append(dt / n)
                here += dt
                if here >= slice_s or len(samples[m]) >= policy.max_repeats * 4:
                    break
            spent[m] += here
    return samples


def summarize(samples: Sequence[float]) -> dict:
    """Median and 10th/90th percentiles (nearest rank) of per-call seconds."""
    s = sorted(samples)
    q = lambda f: s[min(len(s) - 1, int(f * (len(s) - 1) + 0.5))]
    return {"median_s": statistics.median(s), "p10_s": q(0.1), "p90_s": q(0.9),
            "repeats": len(s)}


class Progress:
    """``[#####.....] 12/40  gelu_tanh 2^16 numba  0:31 elapsed, ~0:45 left`` on stderr,
    redrawn in place on a terminal and one line per step otherwise (logs, CI)."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream = max(total, 1), 0, stream
        self.start = time.perf_counter()
        self.tty = getattr(stream, "isatty", lambda: False)()

    @staticmethod
    def _clock(s: float) -> str:
        return f"{int(s) // 60}:{int(s) % 60:02d}"

    def show(self, label: str, final: bool = False) -> None:
        if not (self.tty or final):   # logs get one line per step, terminals a live bar
            return
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}  "
                f"{label[:44]:<44} {self._clock(elapsed)} elapsed"
                + (f", ~{self._clock(left)} left" if self.done else ""))
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        self.stream.flush()

    def step(self, label: str = "") -> None:
        self.done += 1
        self.show(label, final=True)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
