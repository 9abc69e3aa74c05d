"""Run a graph as PyTorch prints it the three ways a user can (a plain helper module, as
``corpus_utils``): interpreted, fused, and fused in strict mode (a group that cannot compile
raises instead of falling back); load a program's source as a module, which
``torch.jit.script`` needs (it reads the function's source file); and compare a function
scripted and traced by torch, run all three ways, with eager torch (``against_torch``)."""
from __future__ import annotations

import importlib.util
import warnings
from typing import Callable, List, Tuple

import numpy as np

from torchlike import jit
from torchlike.fuser import config
from torchlike.ir import parse_graph

MODES = ("interpreted", "fused", "strict")


def graph_modes(text: str) -> List[Tuple[str, Callable]]:
    """(mode, run) for the graph ``text`` in each of ``MODES``; ``run(*args)`` parses anew."""
    def fused(strict):
        def run(*args):
            config.set_strict(strict)
            try:
                return jit.run(jit.fuse(parse_graph(text)), *args)
            finally:
                config.set_strict(False)
        return run
    return [("interpreted", lambda *a: jit.run(parse_graph(text), *a)),
            ("fused", fused(False)), ("strict", fused(True))]


def program_module(tmp_path, name: str, source: str):
    """``source`` written under ``tmp_path`` and imported as module ``name``."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TORCH_TOL = {np.float16: 1e-3, np.float32: 1e-5, np.float64: 1e-12}


def check_torch(got, want, rtol=None, atol=None):
    """``got`` (an array, or a tuple of them) equals torch's ``want`` (a tensor or an array,
    or a tuple of them): dtypes, shapes, values within ``TORCH_TOL`` (NaN where torch has
    NaN; integers and bools exactly)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            check_torch(g, w, rtol, atol)
        return
    w = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    g = np.asarray(got)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    tol = TORCH_TOL.get(w.dtype.type, 0) if w.dtype.kind == "f" else 0
    np.testing.assert_allclose(g, w, rtol=tol if rtol is None else rtol,
                               atol=tol if atol is None else atol)


def to_torch(torch, a):
    """numpy -> torch, through lists and tuples (other values as they are)."""
    if isinstance(a, (list, tuple)):
        return type(a)(to_torch(torch, v) for v in a)
    return torch.from_numpy(np.array(a)) if isinstance(a, (np.ndarray, np.generic)) else a


def _flatten(v):
    if isinstance(v, (tuple, list)):
        return [e for x in v for e in _flatten(x)]
    return [v]


def against_torch(torch, fn, args, captures=("script", "trace")):
    """``fn`` scripted and traced by torch, each graph run interpreted, fused and strict, on
    copies of ``args`` (functions may write into them), against eager torch (nested tuples
    flattened)."""
    warnings.filterwarnings("ignore")
    want = _flatten(fn(*[a.clone() for a in args]))
    for capture in captures:
        f = torch.jit.script(fn) if capture == "script" else \
            torch.jit.trace(fn, tuple(a.clone() for a in args))
        for mode, run in graph_modes(str(f.graph)):
            got = _flatten(run(*[a.clone().numpy() for a in args]))
            assert len(got) == len(want), (fn.__name__, capture, mode)
            for g, w in zip(got, want):
                try:
                    check_torch(g, w)
                except AssertionError as e:
                    raise AssertionError(f"{fn.__name__} ({capture}, {mode}): {e}") from None
