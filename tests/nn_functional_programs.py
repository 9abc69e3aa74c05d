"""Programs that call ``torch.nn.functional``, for tests/test_nn_functional.py.

``torch.jit.script`` needs a function's source in a real file, hence this module.  Scripted, a
call such as ``F.relu(x)`` prints as ``prim::CallFunction`` of a ``Function`` constant named
"relu"; ``.inlined_graph`` is PyTorch's own inlining of the same (the ``inplace`` branches and the
dead function constants kept).

``PROGRAMS``: name -> (function, input maker); an input maker takes a numpy Generator and
returns the inputs as numpy arrays (and Python scalars).  ``write_stored_cases()`` (needs torch)
writes ``tests/nn_functional/<name>/`` -- ``scripted.txt`` and ``inlined.txt`` (paths trimmed),
``inputs.npz`` (``in0``, ``in1``, ...) and ``expected.npz`` (eager PyTorch's ``out0``, ...) -- so
the stored-graph tests run without torch::

    python -c "import sys; sys.path.insert(0, 'tests'); import nn_functional_programs as p; p.write_stored_cases()"
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

try:  # the programs are only defined (and scripted) where torch is installed
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - the stored cases need no torch
    torch = None

STORED = Path(__file__).parent / "nn_functional"

# -- the programs ---------------------------------------------------------------------------------

if torch is not None:
    def activations(x):
        a = F.relu(x)
        b = F.relu6(x * 4.0)
        c = F.hardtanh(x, -2.0, 3.0)
        d = F.elu(x) + F.leaky_relu(x, 0.2)
        e = F.silu(x) * F.mish(x)
        f = F.hardsigmoid(x) - F.hardswish(x)
        g = F.dropout(x, 0.5, False)
        h = F.selu(x) + F.celu(x, 0.5)
        i = F.softsign(x) + F.tanhshrink(x)
        j = F.threshold(x, 0.1, 20.0)
        return a + b + c + d + e + f + g + h + i + j

    def relu6_silu_plus_one(x):
        return F.relu6(F.silu(x)) + 1

    def keyword_arguments(x):
        a = F.leaky_relu(x, negative_slope=0.1, inplace=False)
        b = F.elu(x, alpha=0.5)
        c = F.hardtanh(x, min_val=-0.5, max_val=0.5)
        d = F.celu(x, alpha=2.0)
        e = F.threshold(x, 0.5, -1.0)
        return a * b - c * d + e

    def dropout_eval(x):
        a = F.dropout(x, 0.3, training=False) * 2.0 + F.dropout(x, p=0.1, training=False)
        b = F.alpha_dropout(x, 0.2) - F.feature_alpha_dropout(x, 0.2) + F.dropout2d(x, training=False)
        c = F.dropout3d(x, 0.5, False) * F.rrelu(x) + F.rrelu(x, 0.1, 0.3)
        return a, b, c, F.dropout1d(x[0], 0.5, False) + 1.0

    def softmaxes(x):
        y = x * 2.0 + 1.0
        return F.softmax(y, dim=-1), F.log_softmax(y, 1), F.softmin(y, -1), F.sigmoid(y) + F.tanh(y)

    def builtin_activations(x):
        a = F.gelu(x) + F.gelu(x, approximate="tanh") + F.softplus(x, beta=2.0)
        b = F.logsigmoid(x) + F.hardshrink(x) + F.softshrink(x, 0.3)
        c = torch.lgamma(x.abs() + 0.5) + torch.isnan(x).float()
        return a, b, c

    def integer_ops(a, b):
        s = (a << b) + (a >> b) + torch.bitwise_left_shift(a, 3) + torch.bitwise_right_shift(a, 1)
        return s + torch.round(a) + torch.floor(a) + torch.ceil(a) + torch.trunc(a)

    def norms(x, w, b, rm, rv, lw, lb):
        g = F.glu(x) * 2.0
        n = F.layer_norm(x, [6], lw, lb)
        e = F.batch_norm(x, rm, rv, w, b)
        t = F.batch_norm(x, None, None, w, b, True)
        return g, F.relu(n) + 1.0, e - t

    def control_flow(x, flag: bool):
        if flag:
            y = F.relu(x)
        else:
            y = F.silu(x)
        for _ in range(2):
            y = F.hardswish(y) + F.relu6(y)
        return y


def _x(shape=(5, 7), dtype=np.float32):
    def make(rng):
        x = rng.standard_normal(shape) * 3
        x.flat[:4] = [0.0, -0.0, 6.5, -7.0]
        return [x.astype(dtype)]
    return make


def _ints(rng):
    a = rng.integers(-100, 100, (4, 6)).astype(np.int32)
    b = rng.integers(-3, 40, (4, 6)).astype(np.int32)  # counts out of [0, 32) included
    return [a, b]


def _norm_inputs(rng):
    x = _x((4, 3, 6))(rng)[0]
    c, k = (rng.standard_normal(3).astype(np.float32) for _ in range(2)), rng.random(3)
    w, b = c
    rm, rv = rng.standard_normal(3).astype(np.float32), (k + 0.5).astype(np.float32)
    lw, lb = (rng.standard_normal(6).astype(np.float32) for _ in range(2))
    return [x, w, b, rm, rv, lw, lb]


def _flagged(flag: bool):
    def make(rng):  # no -0.0: the registry's relu(-0.0) is +0.0, PyTorch's -0.0 (ZERO_TIES in
        x = _x()(rng)[0]  # test_ops_elementwise.py), and hardswish + relu6 keep the sign
        x[x == 0] = 0.0
        return [x, flag]
    return make


def _nan_x(rng):
    x = _x((4, 9))(rng)[0]
    x.flat[5] = np.nan
    return [x]


PROGRAMS: Dict[str, Tuple[str, Callable]] = {  # case name -> (function name, input maker)
    "activations": ("activations", _x()),
    "activations_float64": ("activations", _x((3, 17), np.float64)),
    "relu6_silu_plus_one": ("relu6_silu_plus_one", _x((8, 33))),
    "keyword_arguments": ("keyword_arguments", _x()),
    "dropout_eval": ("dropout_eval", _x((2, 3, 4, 5))),
    "softmaxes": ("softmaxes", _x((3, 10))),
    "builtin_activations": ("builtin_activations", _nan_x),
    "integer_ops": ("integer_ops", _ints),
    "norms": ("norms", _norm_inputs),
    "control_flow_true": ("control_flow", _flagged(True)),
    "control_flow_false": ("control_flow", _flagged(False)),
}


def program(case: str) -> Callable:
    return globals()[PROGRAMS[case][0]]


def inputs(case: str, seed: int = 0) -> List[Any]:
    return PROGRAMS[case][1](np.random.default_rng(seed))


def to_torch(values: List[Any]) -> List[Any]:
    return [torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for v in values]


def flatten(result: Any) -> List[np.ndarray]:
    """Outputs (a tensor, an array, or a tuple of them) as a list of numpy arrays."""
    items = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(r.numpy() if hasattr(r, "numpy") else r) for r in items]


def eager(case: str, values: List[Any]) -> List[np.ndarray]:
    """PyTorch's answers: the program run eagerly on ``values``."""
    return flatten(program(case)(*to_torch(values)))


# -- graph texts ----------------------------------------------------------------------------------

_PATHS = re.compile(r"# \S*?(torch/nn/functional\.py|nn_functional_programs\.py)(:\d+:\d+)")


def trim_paths(text: str) -> str:
    """Source comments without the directories: stored texts do not depend on the checkout."""
    return _PATHS.sub(r"# \1\2", text)


def scripted_texts(case: str) -> Dict[str, str]:
    """{"scripted": str(script.graph), "inlined": str(script.inlined_graph)}, as printed."""
    fn = torch.jit.script(program(case))
    return {"scripted": str(fn.graph), "inlined": str(fn.inlined_graph)}


def write_stored_cases() -> None:  # pragma: no cover - run by hand, needs torch
    for case in PROGRAMS:
        d = STORED / case
        d.mkdir(parents=True, exist_ok=True)
        for which, text in scripted_texts(case).items():
            (d / f"{which}.txt").write_text(trim_paths(text))
        values = inputs(case)
        arrays = {f"in{k}": np.asarray(v) for k, v in enumerate(values)}
        np.savez(d / "inputs.npz", **arrays)
        np.savez(d / "expected.npz", **{f"out{k}": v for k, v in enumerate(eager(case, values))})
        kinds = ["array" if isinstance(v, np.ndarray) else type(v).__name__ for v in values]
        (d / "meta.json").write_text(json.dumps(
            {"function": PROGRAMS[case][0], "input_kinds": kinds,
             "torch_version": torch.__version__}, indent=1) + "\n")


def stored_cases() -> List[str]:
    return sorted(p.name for p in STORED.iterdir() if p.is_dir()) if STORED.is_dir() else []


def stored(case: str) -> Tuple[Dict[str, str], List[Any], List[np.ndarray]]:
    """(graph texts by kind, inputs, expected outputs) of a stored case."""
    d = STORED / case
    texts = {w: (d / f"{w}.txt").read_text() for w in ("scripted", "inlined")}
    kinds = json.loads((d / "meta.json").read_text())["input_kinds"]
    with np.load(d / "inputs.npz") as f:
        values = [f[f"in{k}"] if kind == "array" else {"bool": bool, "int": int,
                                                        "float": float}[kind](f[f"in{k}"])
                  for k, kind in enumerate(kinds)]
    with np.load(d / "expected.npz") as f:
        expected = [f[f"out{k}"] for k in range(len(f.files))]
    return texts, values, expected
