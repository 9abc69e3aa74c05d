"""``torch.compile`` as a peer, compiled honestly: one fresh function per workload and size,
``dynamic=False``, dynamo reset before each, and checked to have compiled.

Dynamo caches compiled code on the *code object* of the function it is handed and recompiles
when a guard fails; past ``torch._dynamo.config.recompile_limit`` (8) it silently runs the
function eagerly.  Compiling one shared lambda for every workload therefore timed PyTorch eager
under the name torch.compile for all but the first few workloads.  Here each (workload, size)
gets a new function with its own code object (named ``tc_<workload>_<log2 size>``) after
``torch._dynamo.reset()`` and a cleared ``torch._dynamo.utils.counters``.

``TorchCompiled.problem()`` reads the counters after the first (compiling) call; the mode is
reported as failed, with the reason, unless (torch 2.13, found by experiment):

- ``counters["frames"]``: ``ok == total >= 1`` (a frame that dynamo gave up on, e.g. at the
  recompile limit, counts in ``total`` only),
- ``counters["graph_break"]`` and ``counters["unimplemented"]`` are empty (the recompile limit
  and other give-ups land in ``unimplemented``),
- ``counters["stats"]["unique_graphs"] == 1`` and ``calls_captured >= 1`` (one graph, with ops),
- ``counters["aot_autograd"]["ok"] >= 1`` and ``counters["inductor"]`` has an entry (an FX-graph
  cache miss or hit: Inductor produced the kernel, no eager backend).

``recheck()`` after the timed calls: no frame was compiled during timing (a recompile there
would be charged to the steady state).
"""
from __future__ import annotations

from typing import Callable, Optional


def counters_problem(counters: dict) -> Optional[str]:
    """None when ``counters`` (a snapshot of ``torch._dynamo.utils.counters`` after one
    compiling call) show one clean Inductor graph, else why not."""
    c = {k: dict(v) for k, v in counters.items()}
    frames = c.get("frames", {})
    problems = []
    if not frames.get("total"):
        problems.append("dynamo compiled no frame")
    elif frames.get("ok", 0) != frames.get("total"):
        problems.append(f"{frames['total'] - frames.get('ok', 0)} of {frames['total']} frames "
                        "not compiled (run eagerly)")
    for key, what in (("graph_break", "graph break"), ("unimplemented", "dynamo gave up")):
        if c.get(key):
            first = next(iter(c[key])).strip().splitlines()[0][:160]
            problems.append(f"{sum(c[key].values())} {what}(s): {first}")
    stats = c.get("stats", {})
    if stats.get("unique_graphs", 0) != 1:
        problems.append(f"{stats.get('unique_graphs', 0)} graphs, expected 1")
    elif not stats.get("calls_captured"):
        problems.append("the graph captured no call")
    if not c.get("aot_autograd", {}).get("ok"):
        problems.append("AOT autograd did not finish")
    if not c.get("inductor"):
        problems.append("Inductor produced no kernel (eager backend?)")
    return "; ".join(problems) or None


def _fresh_function(body: Callable, torch, tag: str) -> Callable:
    """``lambda *ts: body(torch, *ts)`` as a new function with its own code object."""
    def call(*ts):
        return body(torch, *ts)
    code = call.__code__.replace(co_name=tag)
    if hasattr(code, "co_qualname"):                      # Python 3.11+
        code = code.replace(co_qualname=tag)
    call.__code__ = code
    call.__name__ = call.__qualname__ = tag
    return call


class TorchCompiled:
    """The torch.compile mode of one workload at one size: ``view`` turns the harness's
    arrays into tensors (untimed, cached)."""

    compiles = True       # the first call compiles: the harness reports it as compile_s

    def __init__(self, torch, body: Callable, workload: str, log2n: int, view: Callable):
        import torch._dynamo
        from torch._dynamo.utils import counters
        self.torch, self.view, self.counters = torch, view, counters
        tag = "tc_" + "".join(ch if ch.isalnum() else "_" for ch in workload) + f"_{log2n}"
        torch._dynamo.reset()          # nothing compiled for an earlier workload or size stays
        counters.clear()
        self.fn = torch.compile(_fresh_function(body, torch, tag), dynamic=False)
        self._frames_after_first: Optional[int] = None

    def __call__(self, *xs):
        return self.fn(*map(self.view, xs))

    def problem(self) -> Optional[str]:
        """After the first call: None when it compiled cleanly, else why not."""
        self._frames_after_first = self.counters["frames"].get("total", 0)
        return counters_problem(self.counters)

    def recheck(self) -> Optional[str]:
        """After the timed calls: None when nothing recompiled meanwhile."""
        now = self.counters["frames"].get("total", 0)
        if self._frames_after_first is not None and now != self._frames_after_first:
            return (f"dynamo compiled {now - self._frames_after_first} more frame(s) during "
                    "the timed calls (recompiles)")
        return None

    def release(self) -> None:
        """Drop the compiled code (called when the size is done)."""
        self.fn = None
        self.torch._dynamo.reset()
