"""The kernel cache, in the style of CuPy's test_kernel_cache: what recompiles and what does not,
fresh outputs per call, the disk cache across processes, and recovery from corrupt entries."""
import glob
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from torchlike.fuser import config, executor
from torchlike.fuser.stats import reset_stats, stats
from torchlike.interpreter import Interpreter
from torchlike.ir.graph import Graph
from torchlike.ir.types import TENSOR


def make_group():
    """tanh(x * y) + x as one group (built by hand: the partitioner is not needed)."""
    sub = Graph()
    x, y = sub.add_input("x", TENSOR), sub.add_input("y", TENSOR)
    one = sub.insert_constant(1)
    m = sub.create("aten::mul", [x, y]).output()
    t = sub.create("aten::tanh", [m]).output()
    a = sub.create("aten::add", [t, x, one]).output()
    sub.set_outputs([a])
    outer = Graph()
    ins = [outer.add_input("a", TENSOR), outer.add_input("b", TENSOR)]
    node = outer.create("prim::FusionGroup", ins, [TENSOR], {"Subgraph": sub})
    outer.set_outputs(node.outputs)
    return node


def check(node, *args):
    got = executor.run_fusion_group(node, np, list(args))[0]
    want = Interpreter(node.attrs["Subgraph"]).run_outputs(list(args))[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    return got


@pytest.fixture
def cache_dir(tmp_path):
    config.set_cache_dir(tmp_path)
    config.set_strict(True)
    executor.clear_caches()
    reset_stats()
    yield tmp_path
    config.set_strict(False)
    config.set_cache_dir(None)
    executor.clear_caches()


def rand(shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_new_sizes_reuse_kernel_new_layouts_do_not(cache_dir):
    node = make_group()
    check(node, rand((2, 3)), rand((2, 3), seed=1))
    assert stats()["kernels_compiled"] == 1
    for shape in [(5, 7), (1024, 3), (4, 4)]:                     # same rank and layout
        check(node, rand(shape), rand(shape, seed=1))
    s = stats()
    assert s["kernels_compiled"] == 1 and s["cache_hits"] == 3 and s["cache_misses"] == 1

    check(node, rand((2, 3), "float64"), rand((2, 3), "float64"))   # new dtype
    assert stats()["kernels_compiled"] == 2
    check(node, rand((2, 3)), rand((1, 3)))                         # new broadcast pattern
    assert stats()["kernels_compiled"] == 3
    check(node, rand((3, 2)).T, rand((2, 3)))                       # new layout (transposed)
    assert stats()["kernels_compiled"] == 4
    check(node, rand((4, 6))[::2, ::2], rand((2, 3)))               # strided: layout A
    assert stats()["kernels_compiled"] == 5
    check(node, rand((6, 5))[::3, ::2], rand((2, 3)))               # same A layout, new sizes
    assert stats()["kernels_compiled"] == 5
    assert stats()["fallbacks"] == {}


def test_outputs_are_fresh_and_typed_per_signature(cache_dir):
    node = make_group()
    a32 = check(node, rand((2, 3)), rand((2, 3), seed=1))
    a64 = check(node, rand((2, 3), "float64"), rand((2, 3), "float64", seed=1))
    b32 = check(node, rand((2, 3)), rand((2, 3), seed=1))
    assert a32.dtype == np.float32 and a64.dtype == np.float64
    assert not np.shares_memory(a32, b32)
    np.testing.assert_array_equal(a32, b32)
    c = check(node, rand((4, 5)), rand((4, 5), seed=1))  # same kernel, its own buffer
    assert c.shape == (4, 5) and not np.shares_memory(c, b32)


SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    from test_cache import make_group, check
    from torchlike.fuser import config
    from torchlike.fuser.stats import stats
    config.set_strict(True)
    node = make_group()
    for dtype in ("float32", "float64"):
        x = np.linspace(-2, 2, 6, dtype=dtype).reshape(2, 3)
        check(node, x, x[::-1].copy())
    print(json.dumps(stats()))
""")


def run_child(cache_dir, wait=True):
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(cache_dir), TORCHLIKE_FUSER_STRICT="1")
    code = SCRIPT.format(tests=os.path.dirname(__file__))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return proc if not wait else finish(proc)


def finish(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_fresh_process_reuses_disk_cache(cache_dir):
    first = run_child(cache_dir)
    assert first["kernels_compiled"] == 2 and first["disk_hits"] == 0
    second = run_child(cache_dir)
    assert second["kernels_compiled"] == 0 and second["disk_hits"] == 2
    assert second["fallbacks"] == {}


def test_two_processes_fill_one_cache(cache_dir):
    procs = [run_child(cache_dir, wait=False) for _ in range(2)]
    for p in procs:
        assert finish(p)["fallbacks"] == {}
    assert not glob.glob(os.path.join(cache_dir, "cpu", ".tmp-*"))  # no half-written files
    after = run_child(cache_dir)
    assert after["kernels_compiled"] == 0 and after["disk_hits"] == 2


def test_corrupt_entries_are_rebuilt(cache_dir):
    node = make_group()
    x = rand((2, 3))
    check(node, x, x)
    (path,) = glob.glob(os.path.join(cache_dir, "cpu", "*.py"))
    good = open(path).read()
    assert good.startswith("# torchlike-cpu-kernel v")
    for garbage in ["not python at all (", "# torchlike-cpu-kernel v0 foreign\n" + good[40:], ""]:
        with open(path, "w") as f:
            f.write(garbage)
        executor.clear_caches()
        check(node, x, x)
        assert open(path).read() == good
    # a corrupt Numba index next to it: dropped and recompiled
    for f in glob.glob(os.path.join(cache_dir, "cpu", "__pycache__", "*")):
        with open(f, "wb") as fh:
            fh.write(b"\x00garbage")
    executor.clear_caches()
    check(node, x, x)
    assert stats()["fallbacks"] == {}
