"""Targeted checks of ``ops/elementwise_pointwise.py`` beyond the registry-wide harness (which
runs every op on every backend and against PyTorch): graph spellings TorchScript normalizes
away, TorchScript scalar forms, dtype-dependent constants on every backend, and the CUDA
prelude's copies of the Cephes tables.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from differential import BACKENDS, backend_missing, fuser_settings, group_node, require, run

from torchlike import jit
from torchlike.interpreter import run as interpret_graph
from torchlike.ir import parse_graph
from torchlike.ir.types import TENSOR
from torchlike.ops import get, registry, special_math

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_prelude_tables_match_special_math():
    """prelude_pointwise.cuh holds the same Cephes coefficients as ops/special_math.py."""
    import torchlike.cuda_backend as cb
    path = os.path.join(os.path.dirname(cb.__file__), "prelude_pointwise.cuh")
    text = open(path).read()
    tables = dict(re.findall(r"double TL_(\w+)\[\d+\] = \{([^}]*)\}", text))
    assert set(tables) == set(special_math.TABLES)
    for name, body in tables.items():
        values = tuple(float(v) for v in body.replace("\n", " ").split(",") if v.strip())
        assert values == special_math.TABLES[name], name


ALIASED = """
graph(%x : Tensor, %y : Tensor):
  %lo : float = prim::Constant[value=-1.]()
  %hi : float = prim::Constant[value=1.]()
  %1 : Tensor = aten::clip(%x, %lo, %hi)
  %2 : Tensor = aten::true_divide(%1, %y)
  %3 : Tensor = aten::special_psi(%2)
  %4 : Tensor = aten::absolute(%3)
  return (%4)
"""


def test_graph_spellings_resolve_and_fuse():
    """aten::clip / true_divide / special_psi / absolute: PyTorch's NormalizeOps aliases run
    as clamp / div / digamma / abs, and fuse into one kernel."""
    assert registry.lookup("aten::clip") is get("aten::clamp")
    assert registry.lookup("aten::true_divide") is get("aten::div")
    x = np.array([-3.0, -0.5, 0.25, 2.0], np.float32)
    y = np.array([2.0, -1.0, 0.5, 4.0], np.float32)
    got = interpret_graph(parse_graph(ALIASED), x, y)
    want = special_math.digamma(np, np.clip(x, -1, 1) / y).astype(np.float32)
    np.testing.assert_allclose(got, np.abs(want), rtol=1e-6)
    fused = jit.fuse(parse_graph(ALIASED))
    groups = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    assert len(groups) == 1 and len(groups[0].attrs["Subgraph"].nodes) >= 4
    with fuser_settings("cpu", strict=True):
        compiled = jit.run(fused, x, y)
    np.testing.assert_allclose(compiled, got, rtol=1e-6)


@pytest.mark.parametrize("name,args,expected", [
    ("aten::copysign", (3, -0.0), -3.0), ("aten::gcd", (12, -18), 6),
    ("aten::ldexp", (1.5, 3), 12.0), ("aten::isfinite", (math.inf,), False),
    ("aten::angle", (-2,), math.pi), ("aten::hypot", (3.0, 4.0), 5.0),
    ("aten::xlogy", (0.0, 0.0), 0.0), ("aten::digamma", (1.0,), -0.5772156649015329),
])
def test_torchscript_scalar_forms(name, args, expected):
    """No array operand: a Python scalar, as TorchScript's scalar overloads give."""
    got = get(name).impl(np, *args)
    assert type(got) is type(expected) and got == pytest.approx(expected, rel=1e-12)


def _one_op_group(kind, consts):
    def build(sub, params):
        from differential import const
        return [sub.create(kind, [params[0], *[const(sub, c) for c in consts]],
                           [TENSOR]).output()]
    return group_node(1, build)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind,consts,x,want", [
    # nan_to_num's defaults are the *output* type's limits, though float16 computes in float32
    ("aten::nan_to_num", [None, None, None], np.array([np.nan, np.inf, -np.inf, 2], np.float16),
     np.array([0, 65504, -65504, 2], np.float16)),
    # logit's eps and 1 - eps are rounded to float16: 1 - 1e-6 is 1.0 there, logit(1) is inf
    ("aten::logit", [1e-6], np.array([1.0, 0.0, 0.5], np.float16),
     np.array([np.inf, -13.8046875, 0.0], np.float16)),
    # nextafter steps in float16 ulps
    ("aten::nextafter", [], np.array([1.0, 0.0, 65504.0], np.float16), None),
])
def test_output_dtype_constants(backend, kind, consts, x, want):
    require(backend_missing(backend))
    if kind == "aten::nextafter":
        node = group_node(2, lambda sub, p: [sub.create(kind, p, [TENSOR]).output()])
        args = [x, np.array([2.0, -1.0, np.inf], np.float16)]
        want = np.array([1.0009765625, -5.960464477539063e-08, np.inf], np.float16)
    else:
        node, args = _one_op_group(kind, consts), [x]
    (got,) = run(backend, node, args)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ldexp_follows_atens_dtype_cases(backend):
    """float self, int exponent: exact std::ldexp in self's dtype (subnormal results round
    once); float16 self, float16 exponent: 2 ** 16 is inf in float16 before the product."""
    require(backend_missing(backend))
    node = group_node(2, lambda sub, p: [sub.create("aten::ldexp", p, [TENSOR]).output()])
    x = np.array([0.75, 1.5, 3.0], np.float32)
    e = np.array([-149, 127, -200], np.int32)
    (got,) = run(backend, node, [x, e])
    np.testing.assert_array_equal(got, np.ldexp(x, e))
    h = np.array([0.5, 0.5], np.float16)
    (got,) = run(backend, node, [h, np.array([16, 15], np.float16)])
    np.testing.assert_array_equal(got, np.array([np.inf, 16384], np.float16))
    (got,) = run(backend, node, [h, np.array([16, 15], np.int16)])  # exact: 2 ** 15 fits
    np.testing.assert_array_equal(got, np.array([32768, 16384], np.float16))
