"""Benchmark workloads: each is a program written once with ``torchlike`` calls (scripted, or
traced where Python builds the program, as for the chains) plus its peers where a peer can
express it: an array-module version ``ref(xp, *xs)`` (numpy on the CPU, also CuPy eager and
``cupy.fuse`` on a GPU), a numexpr version, a PyTorch version and a JAX version.  Hand-written
kernels live in ``numba_kernels.py`` (CPU) and ``cuda.py`` (``cupy.ElementwiseKernel``), keyed by
workload name.  The corpus's PyTorch-printed graphs join as ``corpus:<case>`` (``corpus.py``).

``make_inputs(n, rng)`` returns numpy arrays whose main output has about ``n`` elements; the
GPU half copies them to the device.  ``ref`` is also the oracle every mode is checked against.
``input_rng(name, log2n)`` seeds the inputs of one workload at one size, so that a subprocess
(the JAX peer) builds the same arrays as the harness.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

import torchlike as tl


@dataclass
class Workload:
    name: str
    fn: Callable                         # torchlike program (arrays in, arrays out)
    make_inputs: Callable                # (n, rng) -> tuple of numpy arrays
    ref: Callable                        # (xp, *arrays) -> outputs, numpy/cupy eager
    numexpr: Optional[Callable] = None   # (numexpr, *arrays) -> outputs
    torch: Optional[Callable] = None     # (torch, *tensors) -> outputs
    jax: Optional[Callable] = None       # (jax, *jax arrays) -> outputs; jax.numpy, jax.nn, ...
    dtype: str = "float32"               # dtype of the main input, as reported
    capture: str = "script"              # "script", "trace" (Python-built programs) or "graph"
    corpus: Optional[str] = None         # corpus case holding the same program
    gpu_only: bool = False               # for the CUDA benchmark only
    tags: tuple = field(default_factory=tuple)
    graph_text: Optional[str] = None     # capture "graph": a graph printed by PyTorch
    ref_kind: str = "numpy"              # what ``ref`` is: "numpy" (array-module code, also a
    #                                      mode) or "interpreter" (jit.run of the graph: oracle only)


def input_rng(name: str, log2n: int) -> np.random.Generator:
    """The generator for one workload's inputs at one size (the same in every process)."""
    return np.random.default_rng([zlib.crc32(name.encode()), log2n])


def capture(w: Workload, example: tuple, cache: Optional[dict] = None):
    """The workload as a ``torchlike.jit.ScriptFunction``: scripted (once), traced on
    ``example`` (per size: a traced graph carries shapes) or parsed from PyTorch's graph text
    (once).  ``cache`` (a dict living as long as the workload) keeps what is built once."""
    from torchlike import ir, jit
    cache = {} if cache is None else cache
    if w.capture == "trace":
        return jit.trace(w.fn, example)
    if "capture" not in cache:
        if w.capture == "script":
            cache["capture"] = jit.script(w.fn)
        else:
            cache["capture"] = jit.ScriptFunction(ir.parse_graph(w.graph_text),
                                                  name=w.name.replace(":", "_"))
    return cache["capture"]


# -- inputs -----------------------------------------------------------------------------------

def _square(n):
    side = max(1, int(math.isqrt(n)))
    return side, max(1, n // side)


def _normal(shape, rng, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _one(dtype=np.float32):
    return lambda n, rng: (_normal(_square(n), rng, dtype),)


# -- helpers shared by the peers --------------------------------------------------------------

def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _erf(xp, x):
    """erf for an array module: CuPy's when it has one; numpy has none, so Abramowitz & Stegun
    7.1.26 (|error| < 1.5e-7, what a numpy user would write), in the input's dtype."""
    if xp is not np:
        try:
            from cupyx.scipy.special import erf
            return erf(x)
        except ImportError:
            pass
    t = 1 / (1 + 0.3275911 * xp.abs(x))
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
            + 0.254829592) * t
    return xp.sign(x) * (1 - poly * xp.exp(-x * x))


_FLOAT_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*(?:e[-+]?\d+)?)")


def _ne(expr: str, names: str):
    """A numexpr peer for ``expr`` over inputs ``names``.  numexpr types float literals as
    float64 and would widen float32 work, so each literal is bound as a scalar of the first
    input's dtype."""
    literals = {}

    def bind(m):
        key = f"k{len(literals)}"
        literals[key] = float(m.group(1))
        return key
    text = _FLOAT_LITERAL.sub(bind, expr)
    names = names.split(",")

    def run(ne, *xs):
        env = dict(zip(names, xs))
        env.update({k: xs[0].dtype.type(v) for k, v in literals.items()})
        return ne.evaluate(text, local_dict=env)
    return run


# -- activations ------------------------------------------------------------------------------

def gelu_tanh(x):
    return 0.5 * x * (1.0 + tl.tanh(0.7978845608028654 * (x + 0.044715 * tl.pow(x, 3))))


def gelu_erf(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


def gelu(x):
    return tl.gelu(x)


def silu_swish(x):
    return x * tl.sigmoid(x), x * tl.sigmoid(1.702 * x)


def softplus_threshold(x):
    bx = x * 2.0
    return tl.where(bx > 5.0, x, tl.log1p(tl.exp(bx)) / 2.0)


def mish(x):
    return x * tl.tanh(tl.softplus(x))


def hardswish(x):
    return x * tl.clamp(x + 3.0, 0.0, 6.0) / 6.0


def _ref_gelu_tanh(xp, x):
    return 0.5 * x * (1 + xp.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _ref_softplus(xp, x):
    return xp.where(x > 20, x, xp.log1p(xp.exp(x)))


# -- recurrent cells (the pointwise part; the matmuls happen outside) --------------------------

def lstm_cell_pointwise(gates, c):
    i, f, g, o = tl.chunk(gates, 4, 1)
    i = tl.sigmoid(i)
    f = tl.sigmoid(f)
    g = tl.tanh(g)
    o = tl.sigmoid(o)
    c_new = f * c + i * g
    h_new = o * tl.tanh(c_new)
    return h_new, c_new


def milstm_cell_pointwise(wx, uz, cx, alpha, beta_i, beta_h, bias):
    """Multiplicative-integration LSTM (Wu et al. 2016, eq. in section 2.1), as PyTorch's
    fastrnns benchmark writes it: wx = x W^T, uz = h U^T; (4H,) gains and bias broadcast."""
    gates = alpha * wx * uz + beta_i * wx + beta_h * uz + bias
    i, f, g, o = tl.chunk(gates, 4, 1)
    i = tl.sigmoid(i)
    f = tl.sigmoid(f)
    g = tl.tanh(g)
    o = tl.sigmoid(o)
    cy = f * cx + i * g
    hy = o * tl.tanh(cy)
    return hy, cy


def gru_cell_pointwise(gi, gh, hx, b_ih, b_hh):
    """GRU (Cho et al. 2014; PyTorch's GRUCell): r = s(W_ir x + b_ir + W_hr h + b_hr),
    z = s(W_iz x + b_iz + W_hz h + b_hz), n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
    h' = (1 - z) * n + z * h; gi = x W_ih^T, gh = h W_hh^T."""
    gi = gi + b_ih
    gh = gh + b_hh
    i_r, i_z, i_n = tl.chunk(gi, 3, 1)
    h_r, h_z, h_n = tl.chunk(gh, 3, 1)
    r = tl.sigmoid(i_r + h_r)
    z = tl.sigmoid(i_z + h_z)
    n = tl.tanh(i_n + r * h_n)
    return (1.0 - z) * n + z * hx


def _lstm_inputs(n, rng):
    rows, hidden = _square(n)
    return _normal((rows, 4 * hidden), rng), _normal((rows, hidden), rng)


def _milstm_inputs(n, rng):
    rows, hidden = _square(n)
    return (_normal((rows, 4 * hidden), rng), _normal((rows, 4 * hidden), rng),
            _normal((rows, hidden), rng)) + tuple(_normal((4 * hidden,), rng) for _ in range(4))


def _gru_inputs(n, rng):
    rows, hidden = _square(n)
    return (_normal((rows, 3 * hidden), rng), _normal((rows, 3 * hidden), rng),
            _normal((rows, hidden), rng), _normal((3 * hidden,), rng),
            _normal((3 * hidden,), rng))


def _ref_lstm_tail(xp, i, f, g, o, c):
    c_new = _sigmoid(xp, f) * c + _sigmoid(xp, i) * xp.tanh(g)
    return _sigmoid(xp, o) * xp.tanh(c_new), c_new


def _ref_lstm(xp, gates, c):
    return _ref_lstm_tail(xp, *xp.split(gates, 4, axis=1), c)


def _ref_milstm(xp, wx, uz, cx, alpha, beta_i, beta_h, bias):
    gates = alpha * wx * uz + beta_i * wx + beta_h * uz + bias
    return _ref_lstm_tail(xp, *xp.split(gates, 4, axis=1), cx)


def _ref_gru(xp, gi, gh, hx, b_ih, b_hh):
    i_r, i_z, i_n = xp.split(gi + b_ih, 3, axis=1)
    h_r, h_z, h_n = xp.split(gh + b_hh, 3, axis=1)
    r = _sigmoid(xp, i_r + h_r)
    z = _sigmoid(xp, i_z + h_z)
    n = xp.tanh(i_n + r * h_n)
    return (1 - z) * n + z * hx


_SIG = "1/(1+exp(-({})))"
_NE_LSTM_C = f"{_SIG.format('f')}*c + {_SIG.format('i')}*tanh(g)"
_NE_LSTM_H = f"{_SIG.format('o')}*tanh(c)"


def _ne_lstm(ne, gates, c):
    i, f, g, o = np.split(gates, 4, axis=1)   # views: numexpr reads strided operands
    c_new = ne.evaluate(_NE_LSTM_C, local_dict=dict(i=i, f=f, g=g, c=c))
    return ne.evaluate(_NE_LSTM_H, local_dict=dict(o=o, c=c_new)), c_new


def _ne_milstm(ne, wx, uz, cx, alpha, beta_i, beta_h, bias):
    gates = ne.evaluate("alpha*wx*uz + beta_i*wx + beta_h*uz + bias", local_dict=dict(
        wx=wx, uz=uz, alpha=alpha, beta_i=beta_i, beta_h=beta_h, bias=bias))
    return _ne_lstm(ne, gates, cx)


def _ne_gru(ne, gi, gh, hx, b_ih, b_hh):
    h3 = hx.shape[1]
    env = {}
    for k, part in enumerate("rzn"):
        sl = slice(k * h3, (k + 1) * h3)
        env.update({f"i_{part}": gi[:, sl], f"h_{part}": gh[:, sl],
                    f"bi_{part}": b_ih[sl], f"bh_{part}": b_hh[sl]})
    env["hx"] = hx
    env["one"] = gi.dtype.type(1)
    r = _SIG.format("i_r+bi_r+h_r+bh_r")
    z = _SIG.format("i_z+bi_z+h_z+bh_z")
    n = f"tanh(i_n+bi_n+{r}*(h_n+bh_n))"
    return ne.evaluate(f"(one-{z})*{n} + {z}*hx", local_dict=env)


def _torch_lstm_tail(torch, i, f, g, o, c):
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_new), c_new


def _torch_milstm(torch, wx, uz, cx, alpha, beta_i, beta_h, bias):
    gates = alpha * wx * uz + beta_i * wx + beta_h * uz + bias
    return _torch_lstm_tail(torch, *gates.chunk(4, 1), cx)


def _torch_gru(torch, gi, gh, hx, b_ih, b_hh):
    i_r, i_z, i_n = (gi + b_ih).chunk(3, 1)
    h_r, h_z, h_n = (gh + b_hh).chunk(3, 1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * hx


def _jax_lstm_tail(jax, i, f, g, o, c):
    sig, tanh = jax.nn.sigmoid, jax.numpy.tanh
    c_new = sig(f) * c + sig(i) * tanh(g)
    return sig(o) * tanh(c_new), c_new


def _jax_lstm(jax, gates, c):
    return _jax_lstm_tail(jax, *jax.numpy.split(gates, 4, axis=1), c)


def _jax_milstm(jax, wx, uz, cx, alpha, beta_i, beta_h, bias):
    gates = alpha * wx * uz + beta_i * wx + beta_h * uz + bias
    return _jax_lstm_tail(jax, *jax.numpy.split(gates, 4, axis=1), cx)


def _jax_gru(jax, gi, gh, hx, b_ih, b_hh):
    jnp, sig = jax.numpy, jax.nn.sigmoid
    i_r, i_z, i_n = jnp.split(gi + b_ih, 3, axis=1)
    h_r, h_z, h_n = jnp.split(gh + b_hh, 3, axis=1)
    r = sig(i_r + h_r)
    z = sig(i_z + h_z)
    n = jnp.tanh(i_n + r * h_n)
    return (1 - z) * n + z * hx


# -- chains: one elementwise op per step ----------------------------------------------------

# Cheap (tanh-free) steps, cycled; the numbers keep values bounded over 32 steps.
_AFFINE_STEPS = [("mul", -0.75), ("add", 0.5), ("abs", None), ("sub", 0.25)]
_TRANSC_STEPS = ["sin", "exp", "log1p", "sqrt", "cos", "sigmoid", "tanh", "expm1"]


def _affine_step(k, x, abs_fn):
    op, c = _AFFINE_STEPS[k % 4]
    return x * c if op == "mul" else x + c if op == "add" else x - c if op == "sub" else abs_fn(x)


def affine_chain_expr(length: int, var: str = "x") -> str:
    """The chain as one expression (numexpr, Numba and CUDA C sources are generated from it)."""
    e = var
    for k in range(length):
        op, c = _AFFINE_STEPS[k % 4]
        e = {"mul": f"({e}*{c})", "add": f"({e}+{c})", "sub": f"({e}-{c})",
             "abs": f"abs({e})"}[op]
    return e


def _affine_chain(length):
    def chain(x):
        for k in range(length):
            x = _affine_step(k, x, tl.abs)
        return x

    def ref(xp, x):
        for k in range(length):
            x = _affine_step(k, x, xp.abs)
        return x

    def torch_fn(torch, x):
        for k in range(length):
            x = _affine_step(k, x, torch.abs)
        return x

    def jax_fn(jax, x):
        for k in range(length):
            x = _affine_step(k, x, jax.numpy.abs)
        return x
    chain.__name__ = f"chain_affine_{length}"
    return Workload(chain.__name__, chain, _one(), ref, _ne(affine_chain_expr(length), "x"),
                    torch_fn, jax=jax_fn, capture="trace", tags=("chain",))


def chain_transcendental_8(x):
    x = tl.sin(x)
    x = tl.exp(x)
    x = tl.log1p(x)
    x = tl.sqrt(x)
    x = tl.cos(x)
    x = tl.sigmoid(x)
    x = tl.tanh(x)
    x = tl.expm1(x)
    return x


def _ref_transc(xp, x):
    for name in _TRANSC_STEPS:
        x = _sigmoid(xp, x) if name == "sigmoid" else getattr(xp, name)(x)
    return x


def _torch_transc(torch, x):
    for name in _TRANSC_STEPS:
        x = getattr(torch, name)(x)
    return x


def _jax_transc(jax, x):
    for name in _TRANSC_STEPS:
        x = jax.nn.sigmoid(x) if name == "sigmoid" else getattr(jax.numpy, name)(x)
    return x


_NE_TRANSC = "expm1(tanh(1/(1+exp(-cos(sqrt(log1p(exp(sin(x)))))))))"


def unary_chain_20(x):
    x = tl.sin(x)
    x = tl.cos(x)
    x = tl.exp(x)
    x = tl.log1p(x)
    x = tl.sqrt(x)
    x = tl.rsqrt(x)
    x = tl.reciprocal(x)
    x = tl.neg(x)
    x = tl.abs(x)
    x = tl.tanh(x)
    x = tl.sigmoid(x)
    x = tl.erf(x)
    x = tl.expm1(x)
    x = tl.atan(x)
    x = tl.relu(x)
    x = tl.erfc(x)
    x = tl.log(x)
    x = tl.neg(x)
    x = tl.exp(x)
    x = tl.frac(x)
    return x


_UNARY_20 = ["sin", "cos", "exp", "log1p", "sqrt", "rsqrt", "reciprocal", "neg", "abs", "tanh",
             "sigmoid", "erf", "expm1", "atan", "relu", "erfc", "log", "neg", "exp", "frac"]


def _ref_unary_20(xp, x):
    steps = [xp.sin, xp.cos, xp.exp, xp.log1p, xp.sqrt,                     # in _UNARY_20's order
             lambda v: 1 / xp.sqrt(v), lambda v: 1 / v, lambda v: -v, xp.abs, xp.tanh,
             lambda v: _sigmoid(xp, v), lambda v: _erf(xp, v), xp.expm1, xp.arctan,
             lambda v: xp.maximum(v, 0), lambda v: 1 - _erf(xp, v), xp.log, lambda v: -v,
             xp.exp, lambda v: v - xp.trunc(v)]
    for step in steps:
        x = step(x)
    return x


def _torch_unary_20(torch, x):
    for name in _UNARY_20:
        x = getattr(torch, name)(x)
    return x


def _jax_unary_20(jax, x):
    jnp, special = jax.numpy, jax.scipy.special
    steps = {"rsqrt": jax.lax.rsqrt, "neg": jnp.negative, "sigmoid": jax.nn.sigmoid,
             "erf": special.erf, "erfc": special.erfc, "atan": jnp.arctan, "relu": jax.nn.relu,
             "frac": lambda v: v - jnp.trunc(v)}
    for name in _UNARY_20:
        x = steps[name](x) if name in steps else getattr(jnp, name)(x)
    return x


# -- memory-bound patterns ------------------------------------------------------------------

def scale_shift(x):
    return x * 2.0 + 1.0


def bias_dropout_residual(x, bias, residual):
    return tl.dropout(x + bias, 0.1, False) + residual


def _bias_inputs(n, rng):
    rows, cols = _square(n)
    return _normal((rows, cols), rng), _normal((cols,), rng), _normal((rows, cols), rng)


def broadcast_outer(a, b):
    return (a + b) * a - b


def _outer_inputs(n, rng):
    rows, cols = _square(n)
    return _normal((rows, 1), rng), _normal((1, cols), rng)


# -- seed loops -----------------------------------------------------------------------------

def loop_add_1000(x):
    for _ in range(1000):
        x = x + 1.0
    return x


def loop_square_5(x):
    for _ in range(5):
        x = x * x
    return x


# -- other dtypes ---------------------------------------------------------------------------

def int_bitmix(a, b):
    return tl.bitwise_xor(tl.remainder(a * 3 + b, 1000), tl.bitwise_and(b, 255))


def _int_inputs(n, rng):
    shape = _square(n)
    return (rng.integers(-50000, 50000, shape, dtype=np.int32),
            rng.integers(-50000, 50000, shape, dtype=np.int32))


def mixed_int_float(x, a):
    return x * a + 0.5           # int32 tensor * float32 tensor -> float32 (result_type)


def _mixed_inputs(n, rng):
    shape = _square(n)
    return _normal(shape, rng), rng.integers(-100, 100, shape, dtype=np.int32)


def _jax_gelu_tanh(jax, x):
    return 0.5 * x * (1.0 + jax.numpy.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _torch_gelu_tanh(torch, x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3))))


_NE_GELU_TANH = _ne("0.5*x*(1.0+tanh(0.7978845608028654*(x+0.044715*x**3)))", "x")

WORKLOADS = [
    Workload("gelu_tanh", gelu_tanh, _one(), _ref_gelu_tanh, _NE_GELU_TANH, _torch_gelu_tanh,
             jax=_jax_gelu_tanh, corpus="gelu_tanh", tags=("activation",)),
    Workload("gelu_erf", gelu_erf, _one(),
             lambda xp, x: 0.5 * x * (1 + _erf(xp, x * 0.7071067811865476)), None,
             lambda torch, x: 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476)),
             jax=lambda jax, x: 0.5 * x * (1.0 + jax.scipy.special.erf(x * 0.7071067811865476)),
             tags=("activation",)),
    Workload("gelu", gelu, _one(),  # F.gelu: aten::gelu, one op
             lambda xp, x: 0.5 * x * (1 + _erf(xp, x * 0.7071067811865476)), None,
             lambda torch, x: torch.nn.functional.gelu(x),
             jax=lambda jax, x: jax.nn.gelu(x, approximate=False), tags=("activation",)),
    Workload("silu_swish", silu_swish, _one(),
             lambda xp, x: (x * _sigmoid(xp, x), x * _sigmoid(xp, 1.702 * x)),
             lambda ne, x: (_ne("x/(1+exp(-x))", "x")(ne, x),
                            _ne("x/(1+exp(-1.702*x))", "x")(ne, x)),
             lambda torch, x: (x * torch.sigmoid(x), x * torch.sigmoid(1.702 * x)),
             jax=lambda jax, x: (x * jax.nn.sigmoid(x), x * jax.nn.sigmoid(1.702 * x)),
             corpus="silu_swish", tags=("activation",)),
    Workload("softplus_threshold", softplus_threshold, _one(),
             lambda xp, x: xp.where(x * 2 > 5, x, xp.log1p(xp.exp(x * 2)) / 2),
             _ne("where(x*2>5, x, log1p(exp(x*2))/2)", "x"),
             lambda torch, x: torch.where(x * 2 > 5, x, torch.log1p(torch.exp(x * 2)) / 2),
             jax=lambda jax, x: jax.numpy.where(x * 2 > 5, x,
                                                jax.numpy.log1p(jax.numpy.exp(x * 2)) / 2),
             corpus="softplus_threshold", tags=("activation",)),
    Workload("mish", mish, _one(), lambda xp, x: x * xp.tanh(_ref_softplus(xp, x)),
             _ne("x*tanh(where(x>20, x, log1p(exp(x))))", "x"),
             lambda torch, x: x * torch.tanh(torch.nn.functional.softplus(x)),
             jax=lambda jax, x: x * jax.numpy.tanh(jax.nn.softplus(x)), tags=("activation",)),
    Workload("hardswish", hardswish, _one(), lambda xp, x: x * xp.clip(x + 3, 0, 6) / 6,
             _ne("x*where(x+3<0, 0, where(x+3>6, 6, x+3))/6", "x"),
             lambda torch, x: x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0,
             jax=lambda jax, x: x * jax.numpy.clip(x + 3.0, 0.0, 6.0) / 6.0,
             tags=("activation",)),
    Workload("lstm_cell_pointwise", lstm_cell_pointwise, _lstm_inputs, _ref_lstm, _ne_lstm,
             lambda torch, gates, c: _torch_lstm_tail(torch, *gates.chunk(4, 1), c),
             jax=_jax_lstm, corpus="lstm_cell_pointwise", tags=("rnn",)),
    Workload("milstm_cell_pointwise", milstm_cell_pointwise, _milstm_inputs, _ref_milstm,
             _ne_milstm, _torch_milstm, jax=_jax_milstm, tags=("rnn", "broadcast")),
    Workload("gru_cell_pointwise", gru_cell_pointwise, _gru_inputs, _ref_gru, _ne_gru,
             _torch_gru, jax=_jax_gru, tags=("rnn", "broadcast")),
    *[_affine_chain(k) for k in (1, 2, 4, 8, 16, 32)],
    Workload("chain_transcendental_8", chain_transcendental_8, _one(), _ref_transc,
             _ne(_NE_TRANSC, "x"), _torch_transc, jax=_jax_transc, tags=("chain",)),
    Workload("unary_chain_20", unary_chain_20, _one(), _ref_unary_20, None, _torch_unary_20,
             jax=_jax_unary_20, corpus="unary_chain_20", tags=("chain",)),
    Workload("scale_shift", scale_shift, _one(), lambda xp, x: x * 2 + 1, _ne("x*2.0+1.0", "x"),
             lambda torch, x: x * 2.0 + 1.0, jax=lambda jax, x: x * 2.0 + 1.0,
             corpus="scale_shift", tags=("seed", "memory")),
    Workload("bias_dropout_residual", bias_dropout_residual, _bias_inputs,
             lambda xp, x, b, r: x + b + r, _ne("x+b+r", "x,b,r"),
             lambda torch, x, b, r: torch.nn.functional.dropout(x + b, 0.1, False) + r,
             jax=lambda jax, x, b, r: x + b + r,          # eval dropout: the identity
             tags=("memory", "broadcast")),
    Workload("broadcast_outer", broadcast_outer, _outer_inputs,
             lambda xp, a, b: (a + b) * a - b, _ne("(a+b)*a-b", "a,b"),
             lambda torch, a, b: (a + b) * a - b, jax=lambda jax, a, b: (a + b) * a - b,
             tags=("memory", "broadcast")),
    Workload("loop_square_5", loop_square_5, _one(), lambda xp, x: x ** 32, _ne("x**32", "x"),
             lambda torch, x: loop_square_5(x), jax=lambda jax, x: loop_square_5(x),
             corpus="loop_square_5", tags=("seed",)),
    Workload("gelu_tanh_f64", gelu_tanh, _one(np.float64), _ref_gelu_tanh, _NE_GELU_TANH,
             _torch_gelu_tanh, jax=_jax_gelu_tanh, dtype="float64", tags=("dtype",)),
    Workload("int_bitmix", int_bitmix, _int_inputs,
             lambda xp, a, b: xp.remainder(a * 3 + b, 1000) ^ (b & 255), None,
             lambda torch, a, b: torch.remainder(a * 3 + b, 1000) ^ (b & 255),
             jax=lambda jax, a, b: jax.numpy.remainder(a * 3 + b, 1000) ^ (b & 255),
             dtype="int32", tags=("dtype",)),
    Workload("mixed_int_float", mixed_int_float, _mixed_inputs,
             lambda xp, x, a: x * a.astype(x.dtype) + 0.5, None,
             lambda torch, x, a: x * a + 0.5, jax=lambda jax, x, a: x * a + 0.5,
             dtype="float32+int32", tags=("dtype",)),
    Workload("gelu_tanh_f16", gelu_tanh, _one(np.float16), _ref_gelu_tanh, None,
             _torch_gelu_tanh, jax=_jax_gelu_tanh, dtype="float16",
             tags=("dtype",)),
]


SUITES = ("elementwise", "reductions")


def all_workloads():
    """The hand-written workloads, then the corpus's (``corpus.workloads()``; none where the
    corpus folder is missing), then the fused-reduction ones (``reduction_workloads``)."""
    from .corpus import workloads as corpus_workloads
    from .reduction_workloads import reduction_workloads
    return WORKLOADS + corpus_workloads(WORKLOADS) + reduction_workloads()


def by_name(name: str) -> Workload:
    for w in all_workloads():
        if w.name == name:
            return w
    raise KeyError(f"no workload named {name!r}")


def select(pattern: str = "", device: str = "cpu", suite: str = "elementwise"):
    """The workloads of ``suite`` (``elementwise``: the hand-written and corpus ones;
    ``reductions``: those tagged ``reduction``) whose name contains any of the comma-separated
    ``pattern`` pieces."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}: expected one of {', '.join(SUITES)}")
    pieces = [p for p in pattern.split(",") if p]
    return [w for w in all_workloads() if (device == "cuda" or not w.gpu_only)
            and ("reduction" in w.tags) == (suite == "reductions")
            and (not pieces or any(p in w.name for p in pieces))]
