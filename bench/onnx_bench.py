"""ONNX models of elementwise-heavy blocks: ONNX Runtime (CPU) vs the same file loaded and fused
by torchlike (``torchlike.onnx.load``), side by side in one process, both with every core.

The models are written with ``onnx.helper`` (not by torchlike's exporter), float32, rows of
1024 (the LSTM cell: a batch of rows, hidden size 256, gates 1024):

* ``gelu_mlp_tail``: ``res + Gelu(x + bias)`` (the bias-add, activation and residual after an
  MLP's matmul; Gelu is the opset-20 op);
* ``lstm_pointwise``: gates + bias split in four, sigmoid/tanh, ``c' = f*c + i*g``,
  ``h = o*tanh(c')`` (two outputs);
* ``layer_norm``: ``LayerNormalization`` (ONNX Runtime's own fused kernel);
* ``layer_norm_ops``: layer norm as the ops older exporters write (ReduceMean, Sub, Pow, Sqrt,
  Div, Mul, Add), which ONNX Runtime's graph optimizer may fuse itself.

Each answer is checked against ONNX Runtime's before anything is timed.  Times are medians
(``bench/timing.py``); the copy floor is the time the bytes each call must read and write take
at the machine's copy bandwidth (``bench/cpu.py``'s ``copy_bandwidth``).

    python -m bench.onnx_bench [--sizes 16 22] [--threads 1] [--out bench/results/onnx]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
from pathlib import Path

import numpy as np

from .common import floor_fields, machine_info
from .cpu import copy_bandwidth
from .environment import same_environment
from .timing import FULL, QUICK, summarize, time_call

ROW = 1024


def models(helper, TP, numpy_helper, rows: int):
    """name -> (ModelProto, input maker(rng) -> dict of arrays)."""
    f32 = TP.FLOAT
    vi = helper.make_tensor_value_info

    def model(nodes, inputs, outputs, inits=()):
        g = helper.make_graph(nodes, "block", inputs, outputs, initializer=list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
        m.ir_version = 9
        return m

    def arr(name, a):
        return numpy_helper.from_array(np.asarray(a, np.float32), name)

    x, o = [vi("x", f32, [rows, ROW])], [vi("y", f32, [rows, ROW])]
    out = {}
    bias = np.linspace(-0.5, 0.5, ROW, dtype=np.float32)
    out["gelu_mlp_tail"] = (model(
        [helper.make_node("Add", ["x", "bias"], ["xb"]),
         helper.make_node("Gelu", ["xb"], ["g"]),
         helper.make_node("Add", ["res", "g"], ["y"])],
        x + [vi("res", f32, [rows, ROW])], o, [arr("bias", bias)]),
        lambda rng: {"x": rng.standard_normal((rows, ROW), np.float32),
                     "res": rng.standard_normal((rows, ROW), np.float32)})
    h = ROW // 4
    out["lstm_pointwise"] = (model(
        [helper.make_node("Add", ["gates", "gbias"], ["gb"]),
         helper.make_node("Split", ["gb"], ["i", "f", "g", "o"], axis=1, num_outputs=4),
         helper.make_node("Sigmoid", ["i"], ["si"]), helper.make_node("Sigmoid", ["f"], ["sf"]),
         helper.make_node("Tanh", ["g"], ["tg"]), helper.make_node("Sigmoid", ["o"], ["so"]),
         helper.make_node("Mul", ["sf", "c"], ["fc"]), helper.make_node("Mul", ["si", "tg"], ["ig"]),
         helper.make_node("Add", ["fc", "ig"], ["c2"]), helper.make_node("Tanh", ["c2"], ["tc"]),
         helper.make_node("Mul", ["so", "tc"], ["h2"])],
        [vi("gates", f32, [rows, ROW]), vi("c", f32, [rows, h])],
        [vi("h2", f32, [rows, h]), vi("c2", f32, [rows, h])],
        [arr("gbias", np.linspace(-0.1, 0.1, ROW))]),
        lambda rng: {"gates": rng.standard_normal((rows, ROW), np.float32),
                     "c": rng.standard_normal((rows, h), np.float32)})
    gamma, beta = np.linspace(0.5, 1.5, ROW), np.linspace(-0.1, 0.1, ROW)
    out["layer_norm"] = (model(
        [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1,
                          epsilon=1e-5)], x, o, [arr("gamma", gamma), arr("beta", beta)]),
        lambda rng: {"x": rng.standard_normal((rows, ROW), np.float32)})
    out["layer_norm_ops"] = (model(
        [helper.make_node("ReduceMean", ["x", "axes"], ["mu"], keepdims=1),
         helper.make_node("Sub", ["x", "mu"], ["d"]),
         helper.make_node("Pow", ["d", "two"], ["d2"]),
         helper.make_node("ReduceMean", ["d2", "axes"], ["var"], keepdims=1),
         helper.make_node("Add", ["var", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"]),
         helper.make_node("Div", ["d", "sd"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["ng"]),
         helper.make_node("Add", ["ng", "beta"], ["y"])], x, o,
        [numpy_helper.from_array(np.array([-1], np.int64), "axes"), arr("two", 2.0),
         arr("eps", 1e-5), arr("gamma", gamma), arr("beta", beta)]),
        lambda rng: {"x": rng.standard_normal((rows, ROW), np.float32)})
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[16, 22],
                   help="log2 of the elements of the main input (rows of 1024)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--threads", type=int, default=0,
                   help="threads for both (ONNX Runtime's intra-op pool, Numba's); default all "
                        "cores.  1 compares one core each, which other processes on a shared "
                        "machine disturb far less than parallel kernels")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    if argv is None:  # the harness's allocator and OpenMP settings (bench/environment.py)
        same_environment("bench.onnx_bench")

    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from torchlike import jit
    from torchlike import onnx as tlonnx

    policy = QUICK if args.quick else FULL
    load_before = os.getloadavg()
    if load_before[0] >= 2:
        print(f"warning: load average {load_before[0]:.2f}: Numba's parallel kernels wait for "
              f"cores other processes hold (a timeslice per call); the times will say so")
    cores = args.threads or os.cpu_count() or 1
    if args.threads:
        import numba
        numba.set_num_threads(args.threads)
    def session_options(spinning: bool):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = cores
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # ONNX Runtime's pool threads spin after each run: in one process they take the
        # cores from Numba's threads; "onnxruntime" turns that off, "onnxruntime (spinning)"
        # (its default) is timed after every torchlike timing
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        return opts
    floor = copy_bandwidth(64 << 20)
    if cores == 1:  # the floor one thread reaches
        floor = dict(floor, gbps=floor["single_thread_gbps"], method="numpy.copyto, 1 thread")
    rows_out, later = [], []
    for log2n in args.sizes:
        rows = max(1, (1 << log2n) // ROW)
        for name, (model, make) in models(helper, TensorProto, numpy_helper, rows).items():
            onnx.checker.check_model(model, full_check=True)
            sess = ort.InferenceSession(model.SerializeToString(), session_options(False),
                                        providers=["CPUExecutionProvider"])
            fn = tlonnx.from_model(model)
            rng = np.random.default_rng(log2n)
            sets = [make(rng) for _ in range(policy.rotations(
                sum(a.nbytes for a in make(np.random.default_rng(0)).values())))]
            order = [i.name for i in sess.get_inputs()]
            ort_call = lambda feeds, sess=sess: sess.run(None, feeds)  # noqa: E731
            tl_call = lambda feeds, fn=fn, order=order: fn(*(feeds[k] for k in order))  # noqa: E731
            want = ort_call(sets[0])
            got = tl_call(sets[0])
            got = list(got) if isinstance(got, tuple) else [got]
            for w, g in zip(want, got):
                np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)
            jit.reset_stats()
            stats = {}
            for mode, call in (("onnxruntime", ort_call), ("torchlike", tl_call)):
                stats[mode] = summarize(time_call(call, [(s,) for s in sets], policy))
            st = jit.stats()
            assert not st["fallbacks"], st
            nbytes = sum(a.nbytes for a in sets[0].values()) + sum(w.nbytes for w in want)
            for mode, s in stats.items():
                rows_out.append({"workload": name, "log2_size": log2n, "mode": mode, **s,
                                 **floor_fields(nbytes, s["median_s"], floor["gbps"])})
            ms = {m: st["median_s"] * 1e3 for m, st in stats.items()}
            print(f"{name:16s} 2^{log2n}: onnxruntime {ms['onnxruntime']:8.3f} ms  torchlike "
                  f"{ms['torchlike']:8.3f} ms  ratio {ms['onnxruntime'] / ms['torchlike']:5.2f}x"
                  f"  floor {nbytes / floor['gbps'] / 1e6:7.3f} ms", flush=True)
            later.append((name, log2n, model, sets, nbytes))
            del sess, fn
    # ONNX Runtime's default, spinning pool threads: after every torchlike timing (they would
    # take the cores from Numba's threads for a while after each run)
    for name, log2n, model, sets, nbytes in later:
        spin = ort.InferenceSession(model.SerializeToString(), session_options(True),
                                    providers=["CPUExecutionProvider"])
        s = summarize(time_call(lambda feeds, spin=spin: spin.run(None, feeds),
                                [(x,) for x in sets], policy))
        rows_out.append({"workload": name, "log2_size": log2n, "mode": "onnxruntime (spinning)",
                         **s, **floor_fields(nbytes, s["median_s"], floor["gbps"])})
        print(f"{name:16s} 2^{log2n}: onnxruntime (spinning) {s['median_s'] * 1e3:8.3f} ms",
              flush=True)
        del spin
        gc.collect()
    run = {"machine": machine_info({"load_before": load_before, "load_after": os.getloadavg(),
                                    "threads": cores}),
           "versions": {"onnx": onnx.__version__, "onnxruntime": ort.__version__},
           "copy_bandwidth": floor, "policy": policy.as_dict(), "rows": rows_out}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(run, indent=1))
        (args.out / "report.md").write_text(report(run))
    return run


def report(run: dict) -> str:
    fl = run["copy_bandwidth"]
    lines = ["# ONNX Runtime (CPU) vs torchlike.onnx.load (fused), float32", "",
             f"Machine: {run['machine'].get('cpu_model', '?')}, {run['machine']['cpu_count']} "
             f"cores, {run['machine']['threads']} thread(s) each, load average before the run {run['machine']['load_before'][0]:.2f} (after: "
             f"{run['machine']['load_after'][0]:.2f}); "
             f"onnx {run['versions']['onnx']}, onnxruntime {run['versions']['onnxruntime']}; "
             f"copy floor {fl['gbps']:.1f} GB/s ({fl['method']}).  Medians; ratio = ONNX Runtime "
             f"time (its pool threads not spinning, as they would take the cores from "
             f"torchlike's in one process) / torchlike time (above 1: torchlike is faster); the "
             f"spinning column is ONNX Runtime's default, timed after all torchlike runs; floor = the "
             f"call's bytes (inputs + outputs) at the copy floor.", "",
             "| block | elements | ONNX Runtime ms | ONNX Runtime, spinning, ms | torchlike ms "
             "| ratio | floor ms | torchlike x floor |", "|---|---|---|---|---|---|---|---|"]
    by = {}
    for r in run["rows"]:
        by.setdefault((r["workload"], r["log2_size"]), {})[r["mode"]] = r
    ratios = []
    for (name, log2n), m in by.items():
        o, t = m["onnxruntime"], m["torchlike"]
        ratio = o["median_s"] / t["median_s"]
        ratios.append(ratio)
        sp = m["onnxruntime (spinning)"]
        lines.append(f"| {name} | 2^{log2n} | {o['median_s'] * 1e3:.3f} | "
                     f"{sp['median_s'] * 1e3:.3f} | {t['median_s'] * 1e3:.3f} "
                     f"| {ratio:.2f}x | {t['floor_s'] * 1e3:.3f} | {t['floor_ratio']:.2f} |")
    geo = float(np.exp(np.mean(np.log(ratios)))) if ratios else float("nan")
    lines += ["", f"Geometric mean ratio: {geo:.2f}x.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
