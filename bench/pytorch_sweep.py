"""PyTorch-printed graphs, as a user makes them, run by torchlike: how many give torch's answer.

    python -m bench.pytorch_sweep --out bench/results/sweep            # all (~10 minutes)
    python -m bench.pytorch_sweep --quick --out /tmp/sweep             # a sample

Functions in the style of PyTorch's own fuser tests (test_jit_fuser_te.py: unary, binary and
ternary op tables, activations from torch.nn.functional, LSTM / GRU / MiLSTM cells, dtype
promotion pairs, special values, non-contiguous inputs) are written to a module, scripted and
traced by torch, and their printed graphs (``str(fn.graph)``) are parsed by torchlike and run
three ways: interpreted, fused, and fused in strict mode (a group that cannot compile raises).
Each run is compared with torch's own output: same dtype and shape, values within a
tolerance, NaN where torch has NaN.  Where torch raises, torchlike must raise too.

The report counts the cases per outcome and groups the failures by their first line, so a
class of failures shows as one row.  Needs torch.
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import sys
import tempfile
import textwrap
import warnings

import numpy as np

UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "exp2",
         "expm1", "floor", "frac", "log", "log10", "log1p", "log2", "neg", "reciprocal", "relu",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
         "square", "asinh", "acosh", "atanh", "erfinv", "isnan", "lgamma", "bitwise_not",
         "logical_not", "deg2rad", "rad2deg", "isfinite", "isinf", "signbit", "sinc", "digamma",
         "i0", "sgn", "positive", "nan_to_num"]
BINARY_OPS = {"add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y",
              "floordiv": "x // y", "mod": "x % y", "pow": "x ** y", "and": "x & y",
              "or": "x | y", "xor": "x ^ y", "lshift": "x << y", "rshift": "x >> y",
              "eq": "x == y", "ne": "x != y", "lt": "x < y", "le": "x <= y", "gt": "x > y",
              "ge": "x >= y"}
BINARY_FNS = ["atan2", "maximum", "minimum", "max", "min", "fmod", "remainder", "copysign",
              "hypot", "logaddexp", "xlogy", "fmax", "fmin", "nextafter", "heaviside",
              "logical_and", "logical_or", "logical_xor"]
TERNARY = {"where": "torch.where(x > 0, y, z)", "clamp": "torch.clamp(x, -0.5, 0.5) * y + z",
           "lerp": "torch.lerp(x, y, 0.3) + z", "addcmul": "torch.addcmul(x, y, z, value=0.5)",
           "addcdiv": "torch.addcdiv(x, y, z.abs() + 1, value=2)"}
ACTIVATIONS = {
    "relu": "F.relu(x)", "relu6": "F.relu6(x)", "hardtanh": "F.hardtanh(x, -0.5, 0.5)",
    "elu": "F.elu(x, 1.5)", "leaky_relu": "F.leaky_relu(x, 0.2)", "silu": "F.silu(x)",
    "mish": "F.mish(x)", "hardsigmoid": "F.hardsigmoid(x)", "hardswish": "F.hardswish(x)",
    "gelu": "F.gelu(x)", "gelu_tanh": "F.gelu(x, approximate='tanh')",
    "softplus": "F.softplus(x, 2.0, 5.0)", "selu": "F.selu(x)", "celu": "F.celu(x, 0.5)",
    "softsign": "F.softsign(x)", "tanhshrink": "F.tanhshrink(x)",
    "softshrink": "F.softshrink(x, 0.3)", "hardshrink": "F.hardshrink(x, 0.3)",
    "logsigmoid": "F.logsigmoid(x)", "threshold": "F.threshold(x, 0.1, 2.0)",
    "dropout_eval": "F.dropout(x, 0.3, False)", "sigmoid": "torch.sigmoid(x)",
    "glu": "F.glu(x, -1)", "softmax": "F.softmax(x, -1)", "log_softmax": "F.log_softmax(x, 1)",
}
CELLS = {
    "lstm": ("x, hx, cx, w_ih, w_hh, b_ih, b_hh", """
    gates = torch.mm(x, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    i, f, g, o = gates.chunk(4, 1)
    i = torch.sigmoid(i)
    f = torch.sigmoid(f)
    g = torch.tanh(g)
    o = torch.sigmoid(o)
    cy = f * cx + i * g
    hy = o * torch.tanh(cy)
    return hy, cy"""),
    "gru": ("x, hx, w_ih, w_hh, b_ih, b_hh", """
    gi = torch.mm(x, w_ih.t()) + b_ih
    gh = torch.mm(hx, w_hh.t()) + b_hh
    i_r, i_i, i_n = gi.chunk(3, 1)
    h_r, h_i, h_n = gh.chunk(3, 1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_i + h_i)
    n = torch.tanh(i_n + r * h_n)
    return n + z * (hx - n)"""),
    "milstm": ("x, hx, cx, w_ih, w_hh, alpha, beta_i, beta_h, bias", """
    Wx = x.mm(w_ih.t())
    Uz = hx.mm(w_hh.t())
    gates = alpha * Wx * Uz + beta_i * Wx + beta_h * Uz + bias
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = ingate.sigmoid()
    forgetgate = forgetgate.sigmoid()
    cellgate = cellgate.tanh()
    outgate = outgate.sigmoid()
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * cy.tanh()
    return hy, cy"""),
}
FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.5, -7.25, 100.0, -100.0, 1e-3,
                  np.inf, -np.inf, np.nan, 1e-40, 3e38, -3e38, 0.999, 88.0, -90.0, 1e-7]
INT_SPECIALS = [0, 1, -1, 2, -2, 3, 7, -8, 31, 33, 100, -100, 127, -128, 64, 5]


def _source() -> str:
    parts = ["import torch", "import torch.nn.functional as F", ""]
    for op in UNARY:
        parts.append(f"def u_{op}(x):\n    return torch.{op}(x)\n")
        parts.append(f"def uc_{op}(x):\n    return torch.{op}(x * 2) + torch.{op}(x)\n")
    for name, expr in BINARY_OPS.items():
        parts.append(f"def b_{name}(x, y):\n    return {expr}\n")
    for name in BINARY_FNS:
        parts.append(f"def b_{name}(x, y):\n    return torch.{name}(x, y)\n")
    for name, expr in TERNARY.items():
        parts.append(f"def t_{name}(x, y, z):\n    return {expr}\n")
    for name, expr in ACTIVATIONS.items():
        parts.append(f"def a_{name}(x):\n    return {expr} * 2 + 1\n")
    for name, (args, body) in CELLS.items():
        parts.append(f"def c_{name}({args}):{textwrap.dedent(body).replace(chr(10), chr(10) + '    ')}\n")
    return "\n".join(parts)


def _module(path: str):
    with open(path, "w") as f:
        f.write(_source())
    spec = importlib.util.spec_from_file_location("torchlike_sweep_fns", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _values(torch, dtype: str, n: int, rng, noncontig: bool):
    if dtype == "bool":
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype.startswith("int"):
        a = np.resize(np.array(INT_SPECIALS), n).astype(dtype)
        rng.shuffle(a)
    else:
        a = np.resize(np.array(FLOAT_SPECIALS), n).astype(dtype)
        rng.shuffle(a)
    t = torch.from_numpy(a.reshape(2, -1))
    return t.t() if noncontig else t  # (n/2, 2) transposed view or (2, n/2)


def _cases(mod, torch, quick: bool):
    """(name, fn, torch input tuples) for every function and input variant."""
    rng = np.random.default_rng(0)
    float_types = ["float32"] if quick else ["float32", "float64"]
    all_types = float_types + ([] if quick else ["int32", "int64", "bool"])
    for op in UNARY:
        for kind in ("u", "uc"):
            for dt in all_types:
                for nc in ((False,) if quick else (False, True)):
                    yield (f"{kind}_{op}[{dt}{',T' if nc else ''}]", getattr(mod, f"{kind}_{op}"),
                           (_values(torch, dt, 24, rng, nc),))
    pairs = [("float32", "float32"), ("int64", "int64")] + ([] if quick else [
        ("float32", "float64"), ("int32", "float32"), ("int32", "int64"), ("bool", "int32"),
        ("float64", "int64"), ("bool", "bool")])
    for name in list(BINARY_OPS) + BINARY_FNS:
        for a, b in pairs:
            yield (f"b_{name}[{a},{b}]", getattr(mod, f"b_{name}"),
                   (_values(torch, a, 24, rng, False), _values(torch, b, 24, rng, False)))
    for name in TERNARY:
        for dt in float_types:
            yield (f"t_{name}[{dt}]", getattr(mod, f"t_{name}"),
                   tuple(_values(torch, dt, 24, rng, False) for _ in range(3)))
    for name in ACTIVATIONS:
        for dt in float_types:
            yield f"a_{name}[{dt}]", getattr(mod, f"a_{name}"), (_values(torch, dt, 24, rng, False),)
    r = torch.randn
    cells = {"lstm": (r(3, 10), r(3, 20), r(3, 20), r(80, 10), r(80, 20), r(80), r(80)),
             "gru": (r(3, 10), r(3, 20), r(60, 10), r(60, 20), r(60), r(60)),
             "milstm": (r(3, 10), r(3, 20), r(3, 20), r(80, 10), r(80, 20), r(80), r(80),
                        r(80), r(80))}
    for name, args in cells.items():
        yield f"c_{name}[float32]", getattr(mod, f"c_{name}"), args


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flatten(x)]
    return [out]


def _compare(got, want) -> str:
    """'' if ``got`` (numpy) matches ``want`` (torch outputs), else what differs."""
    got, want = _flatten(got), [w.numpy() if hasattr(w, "numpy") else np.asarray(w)
                                for w in _flatten(want)]
    if len(got) != len(want):
        return f"{len(got)} outputs, torch has {len(want)}"
    for g, w in zip(got, want):
        g = np.asarray(g)
        if g.dtype != w.dtype:
            return f"dtype {g.dtype}, torch {w.dtype}"
        if g.shape != w.shape:
            return f"shape {g.shape}, torch {w.shape}"
        if w.dtype.kind == "f":
            tol = 1e-5 if w.dtype == np.float32 else 1e-10
            if not np.allclose(g, w, rtol=tol, atol=tol, equal_nan=True):
                return "values differ"
        elif not np.array_equal(g, w):
            return "values differ"
    return ""


def run(quick: bool = False):
    import torch

    from torchlike import jit
    from torchlike.fuser import config
    from torchlike.ir import parse_graph
    warnings.filterwarnings("ignore")
    tmp = tempfile.mkdtemp(prefix="torchlike-sweep-")
    mod = _module(os.path.join(tmp, "torchlike_sweep_fns.py"))
    results = []
    for name, fn, args in _cases(mod, torch, quick):
        for capture in ("script", "trace"):
            row = {"case": name, "capture": capture}
            results.append(row)
            try:
                want = fn(*args)
                torch_error = None
            except Exception as e:
                want, torch_error = None, f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
            try:
                f = torch.jit.script(fn) if capture == "script" else torch.jit.trace(fn, args)
                text = str(f.graph)
            except Exception as e:
                row["outcome"] = "torch cannot capture"
                row["detail"] = f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
                continue
            inputs = [a.numpy() for a in args]
            for mode in ("interpreted", "fused", "strict"):
                try:
                    g = parse_graph(text)
                    config.set_strict(mode == "strict")
                    got = jit.run(g if mode == "interpreted" else jit.fuse(g), *inputs)
                    why = "torch raised, torchlike did not" if torch_error else _compare(got, want)
                except Exception as e:
                    first = str(e).splitlines()[0] if str(e) else ""
                    why = "" if torch_error else f"{type(e).__name__}: {first[:160]}"
                finally:
                    config.set_strict(False)
                row[mode] = why
            bad = [m for m in ("interpreted", "fused", "strict") if row[m]]
            row["outcome"] = "ok" if not bad else "failed: " + ",".join(bad)
    return results


def report(results) -> str:
    counts = collections.Counter(r["outcome"].split(":")[0] for r in results)
    classes = collections.Counter()
    examples = {}
    for r in results:
        for mode in ("interpreted", "fused", "strict"):
            why = r.get(mode)
            if why:
                key = (mode, _normalize(why))
                classes[key] += 1
                examples.setdefault(key, f"{r['case']} ({r['capture']})")
    lines = ["# PyTorch-printed graphs through torchlike", "",
             f"{len(results)} graphs (functions x inputs x script/trace); outcome counts: "
             + ", ".join(f"{k} {v}" for k, v in counts.most_common()) + ".", "",
             "| mode | failure (normalized) | count | example |", "|---|---|---|---|"]
    for (mode, why), n in classes.most_common():
        lines.append(f"| {mode} | {why} | {n} | {examples[(mode, why)]} |")
    return "\n".join(lines) + "\n"


def _normalize(why: str) -> str:
    """A failure's class: node names, numbers and source locations removed."""
    import re
    why = re.sub(r"%[\w.]+", "%v", why)
    why = re.sub(r" at \S+:\d+:\d+", "", why)
    why = re.sub(r"\d+", "N", why)
    return why.replace("|", "/")[:140]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.pytorch_sweep",
                                description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    results = run(a.quick)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"schema": "torchlike.sweep/1", "results": results}, f, indent=1)
    text = report(results)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
