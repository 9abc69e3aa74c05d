"""The float64-native helpers of ``cpu_backend/math_f64.py``: within 1 ulp of the correctly
rounded float64 result (mpmath at 120 bits) on a sample of the whole float64 range
(bench/accuracy.py's ``inputs64``: random bit patterns, the switch points, the overflow and
underflow thresholds, specials), NaN exactly where the reference is NaN, zeros with the
reference's sign and exact special values -- called directly, and through the real fuser (one
compiled float64 kernel, strict mode, the counters proving it ran).
``python -m bench.accuracy --f64`` runs the same measurement densely."""
import math

import numpy as np
import pytest
from differential import OpCase, registry_group, run_cpu

from bench import accuracy as acc
from torchlike.cpu_backend import math_act_f64, math_f64, scalar_math
from torchlike.ops import get
from torchlike.ops.elementwise_base import pick_template

pytest.importorskip("mpmath")

# bench/accuracy.py's OPS64 name -> the registry op case whose float64 template calls it
CASES = {
    "exp": OpCase("aten::exp"), "exp2": OpCase("aten::exp2"), "expm1": OpCase("aten::expm1"),
    "log": OpCase("aten::log"),
    "log1p": OpCase("aten::log1p"), "log2": OpCase("aten::log2"),
    "log10": OpCase("aten::log10"), "tanh": OpCase("aten::tanh"),
    "sinh": OpCase("aten::sinh"), "cosh": OpCase("aten::cosh"),
    "sigmoid": OpCase("aten::sigmoid"), "silu": OpCase("aten::silu"),
    "gelu_tanh": OpCase("aten::gelu", {"approximate": "tanh"}),
    "softplus": OpCase("aten::softplus"),
    "softplus(beta=2,threshold=5)": OpCase("aten::softplus", {"beta": 2.0, "threshold": 5.0}),
    "mish": OpCase("aten::mish"), "elu": OpCase("aten::elu"),
    "log_sigmoid": OpCase("aten::log_sigmoid"),
}


def test_every_helper_is_measured():
    assert set(CASES) == set(acc.OPS64)
    helpers = set(math_f64.__all__) | set(math_act_f64.__all__)
    assert {f"tl_{attr}_f64" for attr, _, _ in acc.OPS64.values()} == helpers


def _check(name, got):
    dist, where, frac, nans, zeros = got
    assert nans == 0, f"{name}: {nans} NaN mismatches"
    assert zeros == 0, f"{name}: {zeros} zeros with the wrong sign"
    assert dist <= 1, f"{name}: {dist} doubles from the correctly rounded result at {where!r}"
    assert frac < 1.0, f"{name}: error {frac} ulp"


@pytest.mark.parametrize("name", list(acc.OPS64))
def test_helper_within_1_ulp(name):
    _check(name, acc.measure_op64(name, acc.inputs64(24000, seed=2)))


X = acc.inputs64(6000, seed=1)


@pytest.fixture(scope="module")
def fused():
    """Every case's output from ONE compiled float64 kernel (strict: no fallback)."""
    group = registry_group(list(CASES.values()), "float64")
    outs = run_cpu(group, [X, X, X, np.zeros(X.shape, bool)])
    return dict(zip(CASES, outs))


@pytest.mark.parametrize("name", list(CASES))
def test_fused_kernel_within_1_ulp(fused, name):
    out = fused[name]
    assert out.dtype == np.float64
    _check(name, acc.measure_op64(name, X, out=out))


@pytest.mark.parametrize("name", list(CASES))
def test_templates_pick_the_helpers(name):
    case = CASES[name]
    tpl = get(case.name).templates["numba"]
    attr = acc.OPS64[name][0]
    assert f"tl_{attr}_f64(" in pick_template(tpl, "float64", case.attrs)
    assert "_f64(" not in pick_template(tpl, "float32", case.attrs)  # float32/half: unchanged


@pytest.mark.parametrize("module", [math_f64, math_act_f64])
def test_kernels_see_the_float64_helpers(module):
    assert module.__all__
    for name in module.__all__:
        assert getattr(scalar_math, name) is getattr(module, name)
        assert name in scalar_math.__all__


inf, nan = math.inf, math.nan
SPECIAL = [  # (helper, x, expected): exact, signed zeros included
    ("exp", -0.0, 1.0), ("exp", inf, 0.0 + inf), ("exp", -inf, 0.0), ("exp", nan, nan),
    ("exp", 709.7827128933841, inf), ("exp", 709.782712893384, 1.7976931348622732e308),
    ("exp", -745.1332191019411, 5e-324), ("exp", -745.1332191019412, 0.0),
    ("exp", -708.3964185322641, 2.2250738585072626e-308), ("exp", -740.0, 4.2e-322),
    ("exp", 1.0, math.e),
    ("exp2", -1074.0, 5e-324), ("exp2", -1075.0, 0.0), ("exp2", -1074.5, 5e-324),
    ("exp2", 1023.0, 2.0 ** 1023), ("exp2", 1024.0, inf),
    ("exp2", -inf, 0.0), ("exp2", nan, nan), ("exp2", -0.0, 1.0),
    ("expm1", -0.0, -0.0), ("expm1", 0.0, 0.0), ("expm1", 5e-324, 5e-324),
    ("expm1", -5e-324, -5e-324), ("expm1", -inf, -1.0), ("expm1", inf, inf),
    ("expm1", -40.0, -1.0), ("expm1", 710.0, inf), ("expm1", nan, nan),
    ("log", 0.0, -inf), ("log", -0.0, -inf), ("log", -1.0, nan), ("log", -inf, nan),
    ("log", inf, inf), ("log", 1.0, 0.0), ("log", 5e-324, -744.4400719213812),
    ("log", nan, nan), ("log2", 0.25, -2.0), ("log2", 5e-324, -1074.0),
    ("log10", 1e-300, -300.0), ("log10", 1000.0, 3.0), ("log2", -2.0, nan),
    ("log1p", -0.0, -0.0), ("log1p", -1.0, -inf), ("log1p", -2.0, nan), ("log1p", inf, inf),
    ("log1p", -5e-324, -5e-324), ("log1p", -inf, nan),
    ("tanh", -0.0, -0.0), ("tanh", inf, 1.0), ("tanh", -inf, -1.0), ("tanh", 5e-324, 5e-324),
    ("tanh", -25.0, -1.0), ("tanh", nan, nan),
    ("sinh", -0.0, -0.0), ("sinh", 5e-324, 5e-324), ("sinh", inf, inf), ("sinh", -inf, -inf),
    ("sinh", 710.4758600739439, 1.7976931348621744e308), ("sinh", -710.5, -inf),
    ("sinh", nan, nan), ("cosh", -0.0, 1.0), ("cosh", -inf, inf), ("cosh", 710.5, inf),
    ("cosh", -710.4758600739439, 1.7976931348621744e308), ("cosh", nan, nan),
    ("sigmoid", -0.0, 0.5), ("sigmoid", inf, 1.0), ("sigmoid", -inf, 0.0),
    ("sigmoid", -745.2, 0.0), ("sigmoid", nan, nan),
    ("silu", -0.0, -0.0), ("silu", inf, inf), ("silu", -inf, nan), ("silu", -800.0, -0.0),
    ("gelu_tanh", -0.0, -0.0), ("gelu_tanh", inf, inf), ("gelu_tanh", -inf, nan),
    ("gelu_tanh", -40.0, -0.0), ("gelu_tanh", 40.0, 40.0),
    ("mish", -0.0, -0.0), ("mish", inf, inf), ("mish", -inf, nan), ("mish", -800.0, -0.0),
    ("log_sigmoid", -inf, -inf), ("log_sigmoid", inf, 0.0), ("log_sigmoid", 800.0, 0.0),
    ("log_sigmoid", -800.0, -800.0),
]


@pytest.mark.parametrize("attr,x,want", SPECIAL)
def test_special_values(attr, x, want):
    got = acc.run_helper64(acc.helper64(attr), (), np.float64([x]))[0]
    same = (math.isnan(got) and math.isnan(want)) or (
        got == want and math.copysign(1, got) == math.copysign(1, want))
    assert same, f"{attr}({x!r}) = {got!r}, expected {want!r}"


def test_softplus_attributes():
    f = acc.helper64("softplus")
    x = np.float64([-inf, -1.0, 0.0, 2.0, 2.5, 3.0, inf, nan])
    got = acc.run_helper64(f, (2, 5), x)  # int beta, the threshold compared with beta x
    with np.errstate(invalid="ignore"):
        want = np.where(2 * x > 5, x, np.logaddexp(0.0, 2 * x) / 2)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert got[-3] == 3.0 and got[-2] == inf and got[0] == 0.0
