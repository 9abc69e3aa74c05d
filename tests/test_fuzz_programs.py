"""Random programs, differentially: each seed writes a small Python function of PyTorch ops
(elementwise float and integer ops, reductions, norms; inputs of several dtypes, broadcast
shapes and special values), ``torch.jit.script`` prints its graph, and torchlike runs that
graph interpreted, fused and strict-fused (``graph_modes``), and for every third seed fused
with CUDA kernels run through the emulator.  All must agree with each other and with eager
PyTorch.

The programs are generated, not chosen: a seed's program is whatever the generator makes, so a
change that breaks a class of graphs shows up here without anyone having written that graph.
Tolerances: at the precision of the least precise float the program computes in (a float
input's dtype; float32 for an integer or bool input, which a float op promotes to the default
dtype): 64 ulp of it among the torchlike modes (up to 256 where the program is ill-conditioned:
four times as far as the interpreter and PyTorch differ), 256 against PyTorch.  A float16 or
float32 intermediate rounds at different places in different modes when it feeds a float64
result (softmax fused or op by op; cos of an int32 input against PyTorch's)."""
from __future__ import annotations

import os
import random
import warnings

import numpy as np
import pytest
from differential import backend_missing, use_emulator_as_cuda
from graph_modes import graph_modes, program_module

from torchlike import jit
from torchlike.ir import parse_graph

# Ill-conditioned uses are kept out: sin of an exp's 4048.5469 turns exp's last-bit difference
# into 1.4e-4; logit(sigmoid(x)) cancels 1 - p for large x (hence the clamps).
UNARY = ["torch.exp({})", "torch.log({}.abs() + 1)", "torch.tanh({})", "torch.sigmoid({})",
         "torch.sin({}.clamp(-100, 100))", "torch.cos({}.clamp(-100, 100))", "torch.erf({})", "torch.sqrt({}.abs())",
         "torch.rsqrt({}.abs() + 0.5)", "F.gelu({})", "F.gelu({}, approximate='tanh')",
         "F.silu({})", "F.softplus({})", "F.mish({})", "torch.log1p({}.abs())",
         "torch.expm1({}.clamp(-20, 20))", "torch.atan({})", "F.elu({})",
         "F.leaky_relu({}, 0.1)", "F.hardtanh({})", "torch.relu({})", "torch.abs({})", "(-{})",
         "torch.floor({})", "torch.round({})", "torch.sign({})", "torch.clamp({}, -1.0, 2.0)",
         "torch.reciprocal({})", "torch.frac({})", "torch.trunc({})", "F.hardswish({})",
         "F.hardsigmoid({})", "F.selu({})", "F.logsigmoid({})", "torch.square({})",
         "{}.clamp(min=0.5)", "torch.nan_to_num({})", "torch.erfc({})",
         "torch.sinh({}.clamp(-5, 5))", "torch.asinh({})", "(torch.atan({}) * 2)",
         "torch.tan({}.clamp(-1, 1))", "torch.exp2({}.clamp(-20, 20))",
         "torch.log2({}.abs() + 1)", "F.relu6({})", "F.softsign({})", "F.celu({})",
         "torch.ceil({})", "F.threshold({}, 0.5, -1.0)", "torch.isnan({}).float()",
         "torch.isfinite({}).float()", "torch.signbit({}).float()", "{}.double()", "{}.half()",
         "torch.clamp_min({}, 0.1)", "torch.deg2rad({})", "torch.sigmoid({}.clamp(-2, 2)).logit()",
         "torch.cosh({}.clamp(-5, 5))", "torch.acos({}.clamp(-1, 1))", "F.softshrink({})",
         "F.hardshrink({})", "F.tanhshrink({})", "torch.sgn({})", "torch.exp({}.clamp(-8, 8)) - 1"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / {})", "torch.maximum({}, {})",
          "torch.minimum({}, {})", "torch.atan2({}, {})", "torch.where({} > {}, {}, {})",
          "({} > {}).float()", "torch.fmod({}, {})", "torch.remainder({}, {})",
          "torch.pow({}.abs(), {})", "({} * 2.5 + {})", "torch.lerp({}, {}, 0.3)",
          "torch.hypot({}, {})", "torch.copysign({}, {})",
          "torch.addcmul({}, {}, {}, value=0.5)", "torch.fmax({}, {})",
          "torch.logaddexp({}, {})", "torch.xlogy({}, {}.abs())", "torch.floor_divide({}, {})",
          "torch.eq({}, {}).float()", "torch.where({} > 0, {}, 0.5)", "({} ** 2 + {})",
          "torch.clamp({}, min={})", "torch.fmin({}, {})", "torch.ne({}, {}).float()"]
REDUCE = ["{}.sum(-1, keepdim=True)", "{}.mean(-1, keepdim=True)", "{}.amax(-1, keepdim=True)",
          "torch.softmax({}, -1)", "torch.log_softmax({}, -1)", "{}.var(-1, keepdim=True)",
          "torch.logsumexp({}, -1, keepdim=True)", "{}.norm(dim=-1, keepdim=True)",
          "{}.amin(0, keepdim=True)", "{}.sum(0)", "{}.max(-1, keepdim=True)[0]",
          "F.layer_norm({0}, [{0}.shape[-1]])", "{}.mean()", "torch.softmax({}, 0)",
          "torch.cumsum({}, -1)", "{}.std(-1, keepdim=True)", "{}.prod(-1, keepdim=True)",
          "F.normalize({}, dim=-1)", "{}.argmax(-1, keepdim=True).float()",
          "F.rms_norm({0}, [{0}.shape[-1]])", "{}.amax(-1).unsqueeze(-1)"]
# their operands are inputs, never computed values: a result within an ulp of a multiple of
# the divisor (PyTorch's and ours may round it to either side) turns into ~0 or ~the divisor
LEAF_ONLY = {"torch.fmod({}, {})", "torch.remainder({}, {})"}
INTEGER = ["({} + {})", "({} * {})", "({} - {})", "torch.maximum({}, {})", "({} & {})",
           "({} | {})", "({} ^ {})", "({} << 2)", "({} >> 1)", "torch.abs({})", "(-{})",
           "({} // 3)", "({} % 5)", "torch.clamp({}, -3, 7)", "torch.bitwise_not({})",
           "torch.remainder({}, 7)", "torch.div({}, 3, rounding_mode='floor')", "torch.sign({})",
           "torch.minimum({}, {})", "({} * 3 - {})"]
# more with TORCHLIKE_FUZZ_SEEDS=N (seeds 0..N-1) or =A:B (seeds A..B-1); 24 take ~30 s on 2 cores
_RANGE = os.environ.get("TORCHLIKE_FUZZ_SEEDS", "24").split(":")
SEEDS = range(int(_RANGE[0]), int(_RANGE[1])) if len(_RANGE) == 2 else range(int(_RANGE[0]))
# a fourth mode, the graph fused with CUDA kernels run through the emulator (g++): every third
# seed, or every seed with TORCHLIKE_FUZZ_CUDA=1
_CUDA_EVERY = 1 if os.environ.get("TORCHLIKE_FUZZ_CUDA") == "1" else 3


def _expr(rng: random.Random, names, depth: int, integer: bool) -> str:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(names)
    r = rng.random()
    t = rng.choice(INTEGER if integer else UNARY if r < 0.45 else BINARY if r < 0.8 else REDUCE)
    if t in LEAF_ONLY:  # fmod/remainder jump by the divisor when an operand moves by an ulp
        return "(" + t.format(*[rng.choice(names) for _ in range(t.count("{}"))]) + ")"
    if "{0}" in t:  # the same operand twice (layer_norm over its own last dim)
        return "(" + t.format(_expr(rng, names, depth - 1, integer)) + ")"
    return "(" + t.format(*[_expr(rng, names, depth - 1, integer)
                            for _ in range(t.count("{}"))]) + ")"


def _program(rng: random.Random):
    """(source of ``f``, its inputs as torch tensors) drawn from ``rng``."""
    import torch
    integer = rng.random() < 0.15
    names = [f"x{i}" for i in range(rng.choice([1, 2, 3]))]
    body = [_expr(rng, names, rng.choice([2, 3, 4]), integer)
            for _ in range(rng.choice([1, 1, 2]))]
    src = ("import torch\nimport torch.nn.functional as F\n\n\n"
           f"def f({', '.join(names)}):\n    return {', '.join(body)}\n")
    rows, cols = rng.choice([1, 3, 5, 17]), rng.choice([1, 4, 7, 33, 64])
    shapes = [(rows, cols), (cols,), (rows, 1), (), (2, rows, cols)]
    args = []
    for i in range(len(names)):
        shape = (rows, cols) if i == 0 else rng.choice(shapes)
        if integer:
            dt = rng.choice([torch.int32, torch.int64, torch.int16, torch.uint8])
            args.append(torch.randint(0 if dt == torch.uint8 else -20, 20, shape, dtype=dt))
            continue
        dt = rng.choice([torch.float32, torch.float32, torch.float64, torch.float16,
                         torch.int32, torch.bool])
        if dt == torch.bool:
            a = torch.rand(shape) > 0.5
        elif dt == torch.int32:
            a = torch.randint(-5, 6, shape, dtype=dt)
        else:
            a = (torch.randn(shape, dtype=torch.float64) * rng.choice([1, 3, 30])).to(dt)
            if a.numel() > 2 and rng.random() < 0.3:
                flat = a.view(-1)
                for _ in range(2):
                    flat[rng.randrange(a.numel())] = rng.choice(
                        [float("nan"), float("inf"), float("-inf"), -0.0, 0.0])
        args.append(a)
    return src, args


def _accepted_program(seed: int, tmp_path):
    """The first program drawn from ``seed`` that eager PyTorch runs and TorchScript scripts
    (a program breaking one of PyTorch's dtype rules is drawn again): (source, inputs as
    numpy arrays, PyTorch's results as numpy arrays, the scripted graph's text)."""
    import torch
    rng = random.Random(seed)
    torch.manual_seed(seed)
    for attempt in range(50):
        src, args = _program(rng)
        mod = program_module(tmp_path, f"fuzz_{seed}_{attempt}", src)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = mod.f(*[a.clone() for a in args])
                text = str(torch.jit.script(mod.f).graph)
            except Exception:  # RuntimeError, IndexError (a 0-d .shape[-1]), TypeError, ...
                continue
        wants = want if isinstance(want, tuple) else (want,)
        return src, [a.numpy() for a in args], [w.numpy() for w in wants], text
    raise AssertionError(f"seed {seed}: no program PyTorch accepts in 50 draws")


_EPS = {np.dtype(np.float16): 2.0 ** -10, np.dtype(np.float32): 2.0 ** -23,
        np.dtype(np.float64): 2.0 ** -52}


def _agree(got, want, rel: float, what: str):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaNs")
    inf = np.isinf(want) | np.isinf(got)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=f"{what}: infinities")
    err = _rel_err(got, want)
    assert err <= rel, f"{what}: relative error {err:.3g} > {rel:.3g}"


def _rel_err(got, want) -> float:
    """The largest |got - want| / (|want| + 1) over the elements finite in both (0.0 for
    non-float results)."""
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind != "f":
        return 0.0
    fin = np.isfinite(want) & np.isfinite(got)
    g, w = got[fin].astype(np.float64), want[fin].astype(np.float64)
    return float((np.abs(g - w) / (np.abs(w) + 1.0)).max()) if g.size else 0.0


def _emulated_cuda(text: str, inputs):
    """The graph fused with the CUDA backend, its kernels run on the CPU (groups it has no
    kernel for are interpreted, as for a user)."""
    with use_emulator_as_cuda(strict=False), np.errstate(all="ignore"):
        return jit.run(jit.fuse(parse_graph(text)), *[x.copy() for x in inputs])


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program(torch, tmp_path, seed):
    src, inputs, wants, text = _accepted_program(seed, tmp_path)
    results = {}
    for mode, run in graph_modes(text):
        got = run(*[x.copy() for x in inputs])
        results[mode] = got if isinstance(got, tuple) else (got,)
    if seed % _CUDA_EVERY == 0 and not backend_missing("cuda-emulated"):
        got = _emulated_cuda(text, inputs)
        results["cuda-emulated"] = got if isinstance(got, tuple) else (got,)
    # the least precise float anything is computed in: a float input's dtype, and float32 for
    # integer and bool inputs (a float op promotes them to the default dtype) and for .float():
    # a float64 result of cos(int32) or softmax(float32) carries that op's float32 rounding
    floats = [x.dtype if x.dtype.kind == "f" else np.dtype(np.float32) for x in inputs]
    floats += [np.dtype(np.float32)] * (".float()" in src)  # isnan(x).float(), (a > b).float()
    floats += [np.dtype(np.float16)] * (".half()" in src)
    for k, w in enumerate(wants):
        eps = max([_EPS.get(w.dtype, 0.0)] + [_EPS[d] for d in floats])
        # an ill-conditioned program (a cancellation, a reciprocal of a small difference, an
        # exp of an error) spreads roundings further than 64 ulp: how far two independent
        # evaluations (the interpreter and PyTorch) differ is its measure, and the modes may
        # differ from the interpreter by a few times that, never by more than 256 ulp
        spread = _rel_err(results["interpreted"][k], w) if w.dtype.kind == "f" else 0.0
        among = min(256 * eps, max(64 * eps, 4 * spread))
        for mode, got in results.items():
            _agree(got[k], results["interpreted"][k], among,
                   f"seed {seed} output {k}: {mode} vs interpreted\n{src}")
            _agree(got[k], w, 256 * eps, f"seed {seed} output {k}: {mode} vs PyTorch\n{src}")
