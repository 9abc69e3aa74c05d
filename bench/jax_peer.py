"""The JAX peer of one workload, in its own process (``cpu.run_jax_peer`` starts it)::

    python -m bench.jax_peer --workload gelu_tanh --sizes 10,14 --policy '{"min_time_s": ...}'

JAX (``jax.jit``, XLA on the CPU) keeps its own thread pool; running it in a fresh process per
workload keeps it from sharing the machine's cores with torch's, Numba's or numexpr's pools
inside the harness's process.  For each size the inputs are the harness's own
(``common.input_sets``: same seed, same rotation count), and the policy is the harness's:

1. the inputs are placed on the device once (``jax.device_put``, not timed);
2. a fresh ``jax.jit`` of the workload's JAX version is called once and blocked on
   (``jax.block_until_ready``): trace + XLA compile + one run, reported as ``compile_s``
   (also ``first_call_s``);
3. its outputs are checked against the numpy reference (the interpreter's for a corpus graph)
   with the harness's tolerances; a wrong answer is reported, not timed;
4. timed with ``timing.time_call`` (warm-up, batches of >= 1 ms, rotated inputs), each call
   blocked on.

64-bit inputs (``gelu_tanh_f64``, int64 corpus graphs) turn on ``jax_enable_x64`` for the
process; otherwise JAX's default 32-bit mode is left alone.  One JSON object per size is printed
on stdout as soon as it is known (``mode``, ``log2_size`` and ``stats``, ``wrong`` or
``error``); the first line (``"jax": {...}``) records the versions and devices.

``--check NAMES`` (comma-separated, or ``all``) only checks each workload's JAX version at 2^6
against the reference, one line per workload, in one process (the smoke test uses it).
Disagreements that are XLA's semantics rather than a mistake in a JAX version are named in
``KNOWN_DIFFERENCES``; the reason is appended to the wrong-result message.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

KNOWN_DIFFERENCES = {
    "corpus:special_div_log_sqrt": "XLA on the CPU flushes subnormal floats to zero (the "
                                   "inputs hold 1e-38: x / 1e-38 gives inf, not 5e37)",
}


def _wide(w) -> bool:
    return any(x.dtype.itemsize == 8 for x in w.make_inputs(1 << 6, np.random.default_rng(0)))


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _blocking(jax, jitted):
    return lambda *xs: jax.block_until_ready(jitted(*xs))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.jax_peer")
    parser.add_argument("--workload", help="the workload to time")
    parser.add_argument("--sizes", default="", help="comma-separated log2 sizes")
    parser.add_argument("--policy", default="", help="TimingPolicy fields as JSON")
    parser.add_argument("--check", default="",
                        help="comma-separated workloads (or 'all'): only check them at 2^6")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.check)
    if not (args.workload and args.sizes and args.policy):
        parser.error("--workload, --sizes and --policy are needed to time")

    from . import common
    from .timing import TimingPolicy, summarize, time_call
    from .workloads import by_name
    w = by_name(args.workload)
    policy = TimingPolicy(**json.loads(args.policy))
    sizes = [int(s) for s in args.sizes.split(",") if s]

    import jax
    wide = _wide(w)
    if wide:
        jax.config.update("jax_enable_x64", True)
    _emit({"jax": {"version": jax.__version__, "devices": [str(d) for d in jax.devices()],
                   "x64": wide}})
    body = w.jax

    for log2n in sizes:
        row = {"mode": "jax", "log2_size": log2n}
        try:
            host_sets, rotations = common.input_sets(w, log2n, policy)
            ref = common.reference(w, host_sets[0])
            nbytes = sum(x.nbytes for x in host_sets[0]) + sum(o.nbytes for o in ref)
            sets = [tuple(jax.device_put(x) for x in s) for s in host_sets]
            jax.block_until_ready(sets)
            del host_sets
            call = _blocking(jax, jax.jit(lambda *xs: body(jax, *xs)))
            t0 = time.perf_counter()
            out = call(*sets[0])
            first = time.perf_counter() - t0
            bad = common.check(out, ref)
            del out
            if bad is not None:
                row["wrong"] = bad + (f" ({KNOWN_DIFFERENCES[w.name]})"
                                      if w.name in KNOWN_DIFFERENCES else "")
            else:
                stats = summarize(time_call(call, sets, policy))
                row["stats"] = dict(stats, first_call_s=first, compile_s=first,
                                    rotations=rotations, bytes=nbytes)
            del sets, call
        except Exception as e:
            row["error"] = common._short(e)
        _emit(row)
    return 0


def check(names: str) -> int:
    """Check JAX versions at 2^6 (x64 switched on per workload as the timing run would)."""
    import jax

    from . import common
    from .workloads import all_workloads, input_rng
    wanted = set(names.split(","))
    for w in all_workloads():
        if w.jax is None or w.gpu_only or not (names == "all" or w.name in wanted):
            continue
        jax.config.update("jax_enable_x64", _wide(w))
        row = {"workload": w.name}
        try:
            xs = w.make_inputs(1 << 6, input_rng(w.name, 6))
            out = jax.jit(lambda *a, w=w: w.jax(jax, *a))(*xs)
            row["wrong"] = common.check(out, common.reference(w, xs))
        except Exception as e:
            row["error"] = common._short(e)
        _emit(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
