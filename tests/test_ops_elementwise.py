"""Every elementwise op in the registry, checked against PyTorch and through its Numba template.

Ops are discovered from ``elementwise_ops()``, so a new entry is covered automatically; only ops
whose required attributes or torch call differ from the schema need a line in the tables below.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import torchlike  # noqa: F401  (registers the ops)
from torchlike.errors import ExecutionError, IntegerDivisionByZeroError, TorchlikeError
from torchlike.ops import elementwise_ops, get
from torchlike.ops.dtypes import ALL_DTYPES, Priority, operand_info, result_type
from torchlike.ops.elementwise_base import (compute_dtype_of, kept_operands, pick_template,
                                            signature_dtypes)
from torchlike.ir.types import DTYPE_TO_SCALAR_TYPE_ENUM

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = [d for d in ALL_DTYPES if d != "bfloat16"]  # numpy has no bfloat16
TORCH_DTYPE = {d: getattr(torch, d) for d in DTYPES}

SPECIAL = {
    "float": [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.7, 1e30, 1e-30,
              -7.0, 60000.0],
    "int": [0, 1, -1, 2, -7, 3, 100, -128, 127],
    "uint8": [0, 1, 2, 3, 7, 100, 255],
    "bool": [False, True],
}

# Attribute variants (ops whose attrs are required or worth varying).
ATTRS = {
    "aten::div": [{"rounding_mode": None}, {"rounding_mode": "trunc"}, {"rounding_mode": "floor"}],
    "aten::add": [{"alpha": 1}, {"alpha": 2}],
    "aten::sub": [{"alpha": 1}, {"alpha": 3}],
    "aten::rsub": [{"alpha": 1}, {"alpha": 2}],
    "aten::gelu": [{"approximate": "none"}, {"approximate": "tanh"}],
    "aten::round": [{"decimals": 0}, {"decimals": 2}, {"decimals": -1}],
    "aten::softplus": [{}, {"beta": 2, "threshold": 5}],
    "aten::elu": [{}, {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}],
    "aten::threshold": [{"threshold": 0.5, "value": -2}],
    "aten::hardtanh": [{}, {"min_val": -2, "max_val": 3}],
    "aten::leaky_relu": [{}, {"negative_slope": 0.2}],
    "aten::addcmul": [{"value": 1}, {"value": 2}],
    "aten::addcdiv": [{"value": 1}, {"value": 2}],
    "aten::full_like": [{"fill_value": 3}],
    "aten::to": [{"dtype": DTYPE_TO_SCALAR_TYPE_ENUM[d]} for d in ("float32", "int32", "bool",
                                                                    "float16", "uint8")],
    "aten::zeros_like": [{}, {"dtype": DTYPE_TO_SCALAR_TYPE_ENUM["float64"]}],
    "aten::dropout": [{"p": 0.5, "train": False}],
}

A = torch.ops.aten
def _tdt(enum):
    from torchlike.ir.types import SCALAR_TYPE_ENUM
    return None if enum is None else TORCH_DTYPE[SCALAR_TYPE_ENUM[enum]]


TORCH_FN = {  # ops whose torch call is not aten.<name>(*schema args)
    "aten::__invert__": lambda x: ~x,
    "aten::gelu": lambda x, approximate: A.gelu(x, approximate=approximate),
    "aten::round": lambda x, decimals: A.round(x, decimals=decimals),
    "aten::zeros_like": lambda x, dtype, *rest: torch.zeros_like(x, dtype=_tdt(dtype)),
    "aten::ones_like": lambda x, dtype, *rest: torch.ones_like(x, dtype=_tdt(dtype)),
    "aten::full_like": lambda x, v, dtype, *rest: torch.full_like(x, v, dtype=_tdt(dtype)),
    "aten::type_as": lambda x, o: x.type_as(o),
    "aten::where": lambda c, a, b: torch.where(c, a, b),
}


def _values(dtype):
    if dtype == "bool":
        return SPECIAL["bool"]
    if dtype == "uint8":
        return SPECIAL["uint8"]
    return SPECIAL["float"] if dtype.startswith("float") else SPECIAL["int"]


def _grid(dtype, n_operands, nonzero_rest=False, mask_bool=()):
    """One 1-D array per operand covering all value pairs (the first two operands)."""
    cols = []
    for k in range(n_operands):
        vals = [v for v in _values(dtype) if not (nonzero_rest and k > 0 and v == 0)]
        cols.append(vals)
    if n_operands == 1:
        return [np.array(cols[0], dtype=dtype)]
    pairs = list(itertools.product(cols[0], cols[1]))
    arrays = [np.array([p[0] for p in pairs], dtype=dtype), np.array([p[1] for p in pairs], dtype=dtype)]
    rng = np.random.default_rng(0)
    for k in range(2, n_operands):
        arrays.append(np.array(rng.choice(np.array(cols[k], dtype=object), len(pairs)).tolist(), dtype=dtype))
    return arrays


def _to_torch(v):
    if not isinstance(v, np.ndarray):
        return v
    return torch.from_numpy(v if v.flags.c_contiguous else v.copy())


class _NoOverload(Exception):
    """torch.ops has no overload for these Python argument kinds: not a semantic refusal."""


def _call_torch(op, args):
    targs = [_to_torch(a) for a in args]
    try:
        if op.name in TORCH_FN:
            return TORCH_FN[op.name](*targs)
        pos = [a for p, a in zip(op.params, targs) if p.is_operand]
        kw = {p.name: a for p, a in zip(op.params, targs) if not p.is_operand}
        return getattr(A, op.name.split("::")[1])(*pos, **kw)
    except RuntimeError as e:
        if "failed to match any schema" in str(e) or "Overloaded torch operator" in str(e):
            raise _NoOverload() from e
        raise


# Where PyTorch's vectorized float kernels disagree with its own scalar path and with math, we
# do not copy them: gelu(+inf) is nan, fmod/remainder overflow a/b to nan, and float16
# add/sub with alpha != 1 multiply in float16 (overflowing) instead of computing in float32.
def _f64(v):
    return np.asarray(v, dtype=np.float64)


def _alpha_overflow(k):
    return lambda args: np.abs(_f64(args[k]) * args[2]) > 65504


# Not matched on purpose: torch.pow(bool_tensor, True) returns a copy (exponent 1 short-cut)
# while pow on bool tensors is otherwise not implemented; we refuse bool pow consistently.
KNOWN_GAPS = {("aten::pow", "bool", True)}

QUIRKS = {
    "aten::gelu": lambda args: np.isposinf(_f64(args[0])),
    "aten::fmod": lambda args: np.abs(_f64(args[0]) / _f64(args[1])) > 3e38,
    "aten::remainder": lambda args: np.abs(_f64(args[0]) / _f64(args[1])) > 3e38,
    "aten::add": _alpha_overflow(1), "aten::sub": _alpha_overflow(1),
    "aten::rsub": _alpha_overflow(0),
}


def _call_ours(op, args):
    return op.impl(np, *args)


def _compare(ours, theirs, where=""):
    """None if equal under the corpus rule, else a message."""
    t = theirs.numpy() if theirs.dtype != torch.bfloat16 else None
    if not isinstance(ours, np.ndarray):
        return f"{where}: not an ndarray: {type(ours).__name__}"
    if str(ours.dtype) != str(t.dtype) or ours.shape != t.shape:
        return f"{where}: dtype/shape {ours.dtype}{ours.shape} vs torch {t.dtype}{t.shape}"
    if ours.dtype.kind != "f":
        bad = ours != t
    else:
        o, e = ours.astype(np.float64), t.astype(np.float64)
        rtol = 1e-3 if ours.dtype == np.float16 else 1e-5
        bad = ~np.isclose(o, e, rtol=rtol, atol=1e-6, equal_nan=True)
        bad |= np.isinf(o) != np.isinf(e)
    if bad.any():
        i = np.flatnonzero(bad)[:4]
        return f"{where}: values differ at {i}: ours {ours.ravel()[i]} torch {t.ravel()[i]}"
    return None


def _check(op, args):
    """Run ours and torch on args; None if they agree (both raising counts), else a message."""
    try:
        theirs = _call_torch(op, args)
    except _NoOverload:
        return None
    except Exception as e:  # torch refuses: we must refuse with a typed error
        try:
            _call_ours(op, args)
        except (TorchlikeError, ZeroDivisionError):
            return None
        return f"torch raised {type(e).__name__}: {str(e)[:60]} but we did not"
    try:
        ours = _call_ours(op, args)
    except Exception as e:
        return f"we raised {type(e).__name__}: {e} but torch did not"
    if not isinstance(theirs, torch.Tensor):
        return None if ours == theirs else f"scalar {ours!r} vs {theirs!r}"
    quirk = QUIRKS.get(op.name)
    if quirk and theirs.dtype in (torch.float32, torch.float16) and isinstance(ours, np.ndarray):
        skip = np.broadcast_to(quirk(args), ours.shape)
        if skip.any():
            theirs = theirs.clone()
            theirs[torch.from_numpy(skip.copy())] = torch.from_numpy(ours[skip].copy())
    return _compare(ours, theirs)


def _build_args(op, operands, attrs):
    it = iter(operands)
    args = []
    for p in op.params:
        if p.is_operand:
            args.append(next(it))
        else:
            args.append(attrs.get(p.name, p.default))
    return args


def _operand_arrays(op, dtype, nonzero_rest=False):
    n = len(op.operand_names)
    arrays = _grid(dtype, n, nonzero_rest)
    keep = kept_operands(op)
    for k, name in enumerate(op.operand_names):
        if name in keep:  # where's condition, masked_fill's mask: a bool pattern
            arrays[k] = (np.arange(arrays[0].size) % 3 == 0)
    if op.name == "aten::type_as":
        arrays = [arrays[0]]
    if op.name == "aten::masked_fill":  # value is a 0-d tensor (PyTorch refuses more)
        arrays[2] = arrays[2][-1].copy()
    return arrays


def _cases():
    for op in sorted(elementwise_ops(), key=lambda o: o.name):
        for k, attrs in enumerate(ATTRS.get(op.name, [{}])):
            yield pytest.param(op.name, attrs, id=f"{op.name.split('::')[1]}-{k}")


@pytest.mark.parametrize("name,attrs", list(_cases()))
def test_op_matches_torch(name, attrs):
    """Every dtype x special-value grid, same-dtype operands, plus tensor/0-d/scalar mixes."""
    op = get(name)
    failures = []
    for dtype in DTYPES:
        operands = _operand_arrays(op, dtype)
        if name == "aten::type_as":
            for other in ("float64", "int8", "bool"):
                failures.append(_check(op, [operands[0], np.zeros(1, other)]))
            continue
        msg = _check(op, _build_args(op, operands, attrs))
        if msg is None or "raised" in msg:
            # Integer division by zero raises on both sides: check values without zeros too.
            nz = _operand_arrays(op, dtype, nonzero_rest=True)
            msg2 = _check(op, _build_args(op, nz, attrs))
            msg = msg or msg2
        failures.append(None if msg is None else f"{dtype}: {msg}")
    if len(op.operand_names) >= 2 and name not in ("aten::type_as",):
        failures += _mixed(op, attrs)
    failures = [f for f in failures if f]
    assert not failures, f"{name} {attrs}:\n" + "\n".join(failures[:12])


def _mixed(op, attrs):
    """Mixed dtypes and priorities on the second operand: tensor, 0-d tensor, Python scalar."""
    out = []
    keep = kept_operands(op)
    rng = np.random.default_rng(1)
    for da, db in itertools.product(DTYPES, DTYPES):
        if da == db:
            continue
        a = np.array(_values(da)[:6], dtype=da)
        seconds = [np.resize(np.array(_values(db)[1:7], dtype=db), a.size),
                   np.array(_values(db)[-1], dtype=db)]  # a tensor, a 0-d tensor
        operands = []
        for second in seconds:
            ops = []
            for k, name in enumerate(op.operand_names):
                if name in keep:
                    ops.append(rng.random(a.shape) > 0.5)
                elif not ops or (len(ops) == 1 and op.operand_names[0] in keep):
                    ops.append(a)
                else:
                    ops.append(second if second.ndim == 0 else second[:a.size])
            operands.append(ops)
        for ops in operands:
            msg = _check(op, _build_args(op, ops, attrs))
            if msg:
                out.append(f"{da} with {db}{'' if ops[-1].ndim else ' (0-d)'}: {msg}")
    for da in DTYPES:
        a = np.resize(np.array(_values(da)[:6], dtype=da), (2, 3))
        for scalar in (True, 2, -3, 1.5, 0.0):
            ops = [a if i == 0 else scalar for i, _ in enumerate(op.operand_names)]
            ops = [(a > 0) if n in keep else v for n, v in zip(op.operand_names, ops)]
            if op.operand_names[0] in keep:
                ops[1] = a
            if (op.name, da, scalar) in KNOWN_GAPS:
                continue
            msg = _check(op, _build_args(op, ops, attrs))
            if msg:
                out.append(f"{da} with scalar {scalar!r}: {msg}")
    return out


def test_broadcasting_and_0d_results():
    add, where = get("aten::add"), get("aten::where")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = add.impl(np, x, np.array([1.0, 2.0, 3.0], np.float32), 1)
    np.testing.assert_array_equal(r, x + [1, 2, 3])
    r = where.impl(np, np.array([[True], [False]]), x, np.array(0.0, np.float32))
    assert r.shape == (2, 3) and r.dtype == np.float32
    z = add.impl(np, np.array(1.0, np.float32), 2.0, 1)
    assert isinstance(z, np.ndarray) and z.shape == () and z.dtype == np.float32
    empty = add.impl(np, np.zeros((0, 3), np.int32), 1, 1)
    assert empty.shape == (0, 3) and empty.dtype == np.int32


@pytest.mark.parametrize("prio_a,prio_b", [("dim", "dim"), ("dim", "zero"), ("dim", "scalar"),
                                           ("zero", "scalar"), ("zero", "zero")])
def test_result_type_matches_torch(prio_a, prio_b):
    def make(dtype, prio):
        if prio == "scalar":
            return {"bool": True, "float": 1.5}.get(dtype[:5] if dtype != "bool" else "bool", 2) \
                if dtype in ("bool", "int64", "float32") else None
        return np.zeros((2,) if prio == "dim" else (), dtype=dtype)
    bad = []
    for da, db in itertools.product(DTYPES, DTYPES):
        a, b = make(da, prio_a), make(db, prio_b)
        if a is None or b is None:
            continue
        ours = result_type([operand_info(a), operand_info(b)])
        theirs = str(torch.result_type(_to_torch(a), _to_torch(b))).replace("torch.", "")
        if ours != theirs:
            bad.append(f"{da}/{prio_a} {db}/{prio_b}: {ours} vs {theirs}")
    assert not bad, bad


@pytest.mark.parametrize("name,args,expected", [
    ("aten::add", (1, 2), 3), ("aten::add", (1, 2.5), 3.5), ("aten::sub", (1, 2), -1),
    ("aten::mul", (3, 4), 12), ("aten::div", (7, -2), -3.5), ("aten::div", (7, 0), math.inf),
    ("aten::floor_divide", (7, -2), -4), ("aten::remainder", (7, -2), -1),
    ("aten::fmod", (7, -2), 1.0), ("aten::pow", (2, 3), 8.0), ("aten::pow", (2, -1), 0.5),
    ("aten::neg", (3,), -3), ("aten::abs", (-3,), 3), ("aten::floor", (2.5,), 2),
    ("aten::ceil", (2.5,), 3), ("aten::round", (2.5,), 2.0), ("aten::sqrt", (4,), 2.0),
    ("aten::gt", (1, 2.0), False), ("aten::eq", (1, 1), True), ("aten::__and__", (True, False), False),
    ("aten::__and__", (7, -2), 6), ("aten::__or__", (True, False), True),
    ("aten::remainder", (7.0, 0.0), math.nan), ("aten::log", (2.5,), math.log(2.5)),
])
def test_torchscript_scalar_arithmetic(name, args, expected):
    """No array operand: TorchScript's scalar rules, Python results (checked with torch.jit)."""
    r = get(name).impl(np, *args)
    assert type(r) is type(expected), (r, expected)
    assert r == expected or (math.isnan(expected) and math.isnan(r))


@pytest.mark.parametrize("name,extra", [("aten::floor_divide", ()), ("aten::remainder", ()),
                                        ("aten::fmod", ()), ("aten::div", ("floor",)),
                                        ("aten::div", ("trunc",))])
def test_integer_division_by_zero(name, extra):
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        get(name).impl(np, np.array([1, 2], np.int32), np.array([1, 0], np.int32), *extra)
    if name != "aten::fmod":
        with pytest.raises(ZeroDivisionError):
            get(name).impl(np, 7, 0, *extra)


def test_interpreter_names_the_node_for_division_by_zero():
    from torchlike.ir import parse_graph
    from torchlike.interpreter import run
    g = parse_graph("graph(%a : Long(2), %b : Long(2)):\n"
                    "  %2 : Long(2) = aten::floor_divide(%a, %b)\n  return (%2)\n")
    with pytest.raises(IntegerDivisionByZeroError, match="floor_divide"):
        run(g, np.array([1, 2]), np.array([0, 1]))


def test_to_overloads_and_dropout():
    to = get("aten::to")
    x = np.array([1.5, -2.5], np.float32)
    assert to.impl(np, x, 4, False, False, None).dtype == np.int64
    assert to.impl(np, x, "cpu", 7, False, False, None).dtype == np.float64
    assert to.impl(np, x, np.zeros(3, np.int8), False, False, None).dtype == np.int8
    assert to.impl(np, x, 11, None, None, None, False, False, None).dtype == np.bool_
    drop = get("aten::dropout")
    assert drop.impl(np, x, 0.5, False) is x or np.array_equal(drop.impl(np, x, 0.5, False), x)
    with pytest.raises(TorchlikeError, match="training-mode dropout"):
        drop.impl(np, x, 0.5, True)


def test_clamp_none_and_nan_bounds():
    clamp = get("aten::clamp")
    x = torch.tensor([1.0, math.nan, -3.0, 5.0])
    for lo, hi in [(None, 2.0), (0.0, None), (math.nan, None), (None, math.nan), (3.0, 2.0)]:
        ours = clamp.impl(np, x.numpy(), lo, hi)
        assert _compare(ours, torch.clamp(x, lo, hi)) is None, (lo, hi)
    with pytest.raises(ExecutionError):
        clamp.impl(np, x.numpy(), None, None)


# ----- Numba templates: render, compile a tiny kernel, compare with the interpreter -----

numba = pytest.importorskip("numba")
# float32 and float64 share code, as do the int types; int8 catches narrow-int promotion slips.
_NUMBA_DTYPES = ("float32", "int8", "bool")


def _render(op, compute, attrs, operand_present):
    text = pick_template(op.templates["numba"], compute, attrs)
    if text is None:
        return None
    subs = {}
    for k, name in enumerate(op.operand_names):
        subs[name] = f"v{k}" if operand_present[k] else "None"
    for name in op.attr_names:
        subs[name] = repr(attrs.get(name, op.params[[p.name for p in op.params].index(name)].default))
    return text.format(**subs)


_KERNEL = """
from torchlike.cpu_backend.scalar_math import *
def kernel({params}, out, err):
    for i in range(out.shape[0]):
{loads}
        out[i] = {expr}
"""


@pytest.mark.parametrize("name", sorted(o.name for o in elementwise_ops() if "numba" in o.templates))
def test_numba_template(name):
    op = get(name)
    failures = []
    seen = set()
    for attrs in ATTRS.get(name, [{}]):
        full = {p.name: attrs.get(p.name, p.default) for p in op.params if not p.is_operand}
        for dtype in _NUMBA_DTYPES:
            operands = _operand_arrays(op, dtype, nonzero_rest=True)
            if name == "aten::type_as":
                full["other"] = np.zeros(1, np.int8)
            args = _build_args(op, operands, full)
            try:
                expected = op.impl(np, *args)
            except TorchlikeError:
                continue  # the op refuses this dtype: nothing to generate
            infos = [operand_info(v) for v in operands]
            compute, _ = signature_dtypes(op, infos, full)
            compute = compute_dtype_of(compute)
            expr = _render(op, compute, full, [True] * len(operands))
            if expr is None:
                continue
            key = (expr, compute, str(expected.dtype), tuple(str(v.dtype) for v in operands))
            if key in seen:  # int8 and bool inputs of float ops compile to the same kernel
                continue
            seen.add(key)
            keep = kept_operands(op)
            cast = [v if n in keep else v.astype(compute) for n, v in zip(op.operand_names, operands)]
            n = len(cast)
            src = _KERNEL.format(params=", ".join(f"a{k}" for k in range(n)),
                                 loads="\n".join(f"        v{k} = a{k}[i]" for k in range(n)),
                                 expr=expr)
            ns = {}
            exec(compile(src, f"<{name} {dtype}>", "exec"), ns)
            # Numba has no float16 arrays: store float32 and round once, as the codegen must.
            out = np.empty(expected.shape, np.float32 if expected.dtype == np.float16
                           else expected.dtype)
            err = np.zeros(1, np.int32)
            try:
                numba.njit(error_model="numpy")(ns["kernel"])(*[np.ascontiguousarray(np.broadcast_to(c, expected.shape))
                                           for c in cast], out, err)
            except Exception as e:
                failures.append(f"{dtype} {attrs}: `{expr}` failed to compile/run: "
                                f"{type(e).__name__}: {str(e)[:300]}")
                continue
            assert err[0] == 0
            msg = _compare(out.astype(expected.dtype), torch.from_numpy(expected), f"{dtype} {attrs} `{expr}`")
            if msg:
                failures.append(msg)
    assert not failures, "\n".join(failures[:8])


def test_numba_int_division_sets_error_flag():
    from torchlike.cpu_backend import scalar_math as sm

    @numba.njit(error_model="numpy")
    def k(a, b, out, err):
        for i in range(a.shape[0]):
            out[i] = sm.tl_int_div_floor(a[i], b[i], err)
    out, err = np.empty(2, np.int64), np.zeros(1, np.int32)
    k(np.array([7, 1]), np.array([-2, 0]), out, err)
    assert out[0] == -4 and err[0] == 1


def test_numba_clamp_with_absent_bound():
    """An absent optional operand renders as None and the helper prunes that branch."""
    op = get("aten::clamp")
    expr = _render(op, "float32", {}, [True, False, True])
    assert expr == "tl_clamp(v0, None, v2)"
    ns = {}
    exec(compile(_KERNEL.format(params="a0, a2", loads="        v0 = a0[i]\n        v2 = a2[i]",
                                expr=expr), "<clamp>", "exec"), ns)
    x = np.array([1.0, np.nan, -3.0, 5.0], np.float32)
    hi = np.full(4, 2.0, np.float32)
    out, err = np.empty(4, np.float32), np.zeros(1, np.int32)
    numba.njit(error_model="numpy")(ns["kernel"])(x, hi, out, err)
    np.testing.assert_array_equal(out, op.impl(np, x, None, hi))
