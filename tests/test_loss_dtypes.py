"""The pointwise losses' dtypes, as ATen computes them: mse_loss / smooth_l1_loss over the two
operands' common dtype (an int32 input against a float32 target is float32; two integer
operands refused by the kernel's dispatch), l1_loss as its composite ``(x - t).abs()`` (integer
losses summed as integers, their mean refused; a bool operand refused by the subtraction), and
huber_loss into an output shaped and typed like its input (so a float result cannot go into an
integer input's dtype, and a float16 input against a float32 target gives a float16 loss).
Against eager PyTorch where installed; the dtypes and messages of the table also without it."""
import re

import numpy as np
import pytest

from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.ir import parse_graph

LOSSES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
PAIRS = [("int32", "float32"), ("float32", "int32"), ("int32", "int32"), ("float16", "float32"),
         ("float32", "float16"), ("bool", "float32"), ("float32", "float64"),
         ("float64", "float32"), ("float16", "float16")]


def _graph(name: str, reduction: int):
    beta = ", %beta" if name in ("smooth_l1_loss", "huber_loss") else ""
    return parse_graph(f"""graph(%x : Tensor, %t : Tensor):
  %red : int = prim::Constant[value={reduction}]()
  %beta : float = prim::Constant[value=0.5]()
  %y : Tensor = aten::{name}(%x, %t, %red{beta})
  return (%y)""")


def _operands(dx, dt, seed=0):
    rng = np.random.default_rng(seed)
    return tuple((rng.standard_normal((16, 9)) * 3).astype(d) for d in (dx, dt))


# (loss, input dtype, target dtype) -> the result's dtype, or the error PyTorch 2.13 raises
TABLE = {
    ("mse_loss", "int32", "float32"): "float32",
    ("mse_loss", "bool", "float32"): "float32",
    ("mse_loss", "int32", "int32"): '"mse_cpu" not implemented for \'Int\'',
    ("mse_loss", "float32", "float64"): "float64",
    ("l1_loss", "int32", "float32"): "float32",
    ("l1_loss", "bool", "float32"): "Subtraction, the `-` operator, with a bool tensor",
    ("l1_loss", "int32", "int32"): "mean(): could not infer output dtype",
    ("smooth_l1_loss", "float32", "int32"): "float32",
    ("smooth_l1_loss", "int32", "int32"): '"smooth_l1_cpu" not implemented for \'Int\'',
    ("huber_loss", "int32", "float32"): "result type Float can't be cast to the desired "
                                        "output type Int",
    ("huber_loss", "float32", "int32"): "float32",
    ("huber_loss", "float16", "float32"): "float16",
    ("huber_loss", "float32", "float64"): "float32",
}


@pytest.mark.parametrize("key", sorted(TABLE), ids=lambda k: "-".join(k))
def test_dtype_or_error_as_pytorch(key):
    name, dx, dt = key
    x, t = _operands(dx, dt)
    want = TABLE[key]
    g = _graph(name, 1)
    for graph in (g, jit.fuse(g)):
        if want.startswith(("float", "int")):
            got = jit.run(graph, x, t)
            assert str(got.dtype) == want and got.shape == ()
            c = np.float64
            diff = x.astype(c) - t.astype(c)
            if name == "mse_loss":
                np.testing.assert_allclose(got, np.mean(diff * diff), rtol=1e-3)
        else:
            with pytest.raises(ExecutionError, match=re.escape(want)) as e:
                jit.run(graph, x, t)
            assert f"aten::{name}" in str(e.value)


def test_integer_l1_sum_stays_integer():
    """(x - t).abs().sum() of int32 operands: an int64 sum, as PyTorch's sum of an int32."""
    x, t = (np.arange(12, dtype=np.int32).reshape(3, 4), np.full((3, 4), 5, np.int32))
    got = jit.run(_graph("l1_loss", 2), x, t)
    assert got.dtype == np.int64 and int(got) == int(np.abs(x - t).sum())
    none = jit.run(_graph("l1_loss", 0), x, t)
    assert none.dtype == np.int32
    np.testing.assert_array_equal(none, np.abs(x - t))


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses_match_pytorch_over_dtype_pairs(torch, name, reduction):
    g = _graph(name, reduction)
    fn = getattr(torch._C._nn, name)
    for dx, dt in PAIRS:
        x, t = _operands(dx, dt, seed=reduction)
        args = (torch.from_numpy(x), torch.from_numpy(t), reduction) + (
            (0.5,) if name in ("smooth_l1_loss", "huber_loss") else ())
        try:
            want = fn(*args).numpy()
        except (RuntimeError, NotImplementedError) as e:
            with pytest.raises(ExecutionError) as got:
                jit.run(g, x, t)
            first = str(e).splitlines()[0]
            assert first[:40] in str(got.value), (name, dx, dt, first, str(got.value))
            continue
        got = jit.run(g, x, t)
        assert got.dtype == want.dtype and got.shape == want.shape, (name, dx, dt)
        # float16 losses: PyTorch's half kernels round each step in half, torchlike computes
        # in float32 and rounds once; reductions: a different summation order
        tol = 2e-2 if want.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=tol, atol=tol, err_msg=f"{name} {dx} {dt}")
