"""Helpers for the PyTorch-made corpus copied into tests/corpus (see its README.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import numpy as np

CORPUS = Path(__file__).parent / "corpus" / "cases"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())


def meta(case: str) -> dict:
    return json.loads((CORPUS / case / "meta.json").read_text())


def graph_text(case: str, which: str) -> str:
    return (CORPUS / case / f"{which}.txt").read_text()


def graph_files(case: str) -> List[str]:
    """The graph texts of ``case``: traced, scripted, and both as printed after PyTorch's
    TensorExpr fuser ran (``prim::TypeCheck`` guards, ``prim::TensorExprGroup`` subgraphs)."""
    return [w for w in ("traced", "scripted", "te_fused_traced", "te_fused")
            if (CORPUS / case / f"{w}.txt").exists()]


class Params(dict):
    """Module parameters (params.npz) as an object with attributes, for a ``%self`` input."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def input_sets(case: str) -> Iterator[Tuple[str, list, Dict[str, np.ndarray]]]:
    """(label, inputs in graph order, expected outputs) for every input set of ``case``.

    Non-contiguous example inputs (meta "strides") are rebuilt as real views, so layouts are
    exercised; 0-d int inputs of kind "int" become Python ints; a module case gets its
    parameters as the first (``%self``) input."""
    m = meta(case)
    d = CORPUS / case
    labels = [("", "inputs.npz", "expected.npz")]
    for p in sorted(d.glob("inputs_alt*.npz")):
        k = p.stem[len("inputs_"):]
        labels.append((k, p.name, f"expected_{k}.npz"))
    for label, inp, exp in labels:
        arrays = np.load(d / inp, allow_pickle=False)
        args = []
        if (d / "params.npz").exists():
            params = np.load(d / "params.npz", allow_pickle=False)
            args.append(Params({k: params[k] for k in params.files}))
        for spec in m["inputs"]:
            value = arrays[spec["name"]]
            if spec.get("kind") == "int":
                value = int(value)
            elif spec.get("kind") == "float":
                value = float(value)
            elif spec.get("strides") is not None and not spec.get("contiguous", True):
                value = as_view_with_strides(value, spec["strides"])
            args.append(value)
        expected = np.load(d / exp, allow_pickle=False)
        yield label or "inputs", args, {k: expected[k] for k in expected.files}


def as_view_with_strides(value: np.ndarray, strides) -> np.ndarray:
    """A view with ``value``'s contents and the given element strides (0 = broadcast)."""
    if any(s == 0 for s in strides):
        # An expanded tensor: take the first element along stride-0 dims and broadcast it back.
        index = tuple(slice(0, 1) if s == 0 else slice(None) for s in strides)
        return np.broadcast_to(value[index], value.shape)
    # A strided view of a fresh buffer (transposed, step-sliced), filled with the values.
    size = 1 + sum((n - 1) * st for n, st in zip(value.shape, strides)) if value.size else 0
    buffer = np.zeros(max(size, 1), value.dtype)
    view = np.lib.stride_tricks.as_strided(
        buffer, value.shape, tuple(st * value.itemsize for st in strides))
    view[...] = value
    return view


def flatten_outputs(result) -> list:
    """Nested tuples/lists flattened depth-first, as expected.npz's out0, out1, ... are."""
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in flatten_outputs(item)]
    return [result]


def assert_matches(actual, expected: np.ndarray, what: str = "") -> None:
    """The corpus rule: floats allclose(rtol=1e-5, atol=1e-6), NaN positions and infinities
    equal; integers and booleans exactly; dtype and shape as PyTorch's."""
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=what)
        np.testing.assert_array_equal(np.isposinf(actual), np.isposinf(expected), err_msg=what)
        np.testing.assert_array_equal(np.isneginf(actual), np.isneginf(expected), err_msg=what)
        finite = np.isfinite(expected)
        np.testing.assert_allclose(actual[finite], expected[finite], rtol=1e-5, atol=1e-6,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
