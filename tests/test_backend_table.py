"""The backend table (``torchlike.backends``), the package's layering, and the executor's debug
logging of fallbacks and kernel sources."""
import ast
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import torchlike
from torchlike import backends
from torchlike.fuser import backend as fb
from torchlike.fuser import config, executor
from torchlike.fuser.stats import reset_stats, stats
from torchlike.ir.graph import Graph
from torchlike.ir.types import TENSOR

ROOT = os.path.dirname(os.path.abspath(torchlike.__file__))

# ir < ops < interpreter < {frontend, passes, functional} < fuser < backends < {jit, backends}
LAYER = {"errors": 0, "ir": 0, "ops": 1, "interpreter": 2, "frontend": 3, "passes": 3,
         "functional": 3, "fuser": 4, "cpu_backend": 5, "cuda_backend": 5, "jit": 6,
         "backends": 6}
OPTIONAL = ("numba", "cupy", "llvmlite")  # third-party packages imported where first needed


def _modules():
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def _imports(rel, path):
    """(line, absolute module, inside a function) for every import of ``path``."""
    parts = ["torchlike"] + rel[:-3].split("/")
    package = parts[:-1] if not rel.endswith("__init__.py") else parts[:-1]
    tree = ast.parse(open(path).read())
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    nested = {id(n) for f in funcs for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1])
                names = [f"{base}.{node.module}"] if node.module else \
                    [f"{base}.{a.name}" for a in node.names]
            else:
                names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            yield node.lineno, name, id(node) in nested


def _layer_of(rel):
    return LAYER.get(rel.split("/")[0].removesuffix(".py"))


def test_import_torchlike_registers_the_table():
    for name, entry in backends.BACKENDS.items():
        assert name in fb.BACKENDS and isinstance(entry, str) and ":" in entry
    assert {"cpu", "cuda", "cuda-emulated", "interpreter"} <= set(fb.BACKENDS)
    assert fb.get_backend_impl("cpu").name == "cpu"
    assert fb.get_backend_impl("cuda-emulated").name == "cuda-emulated"


def test_importing_torchlike_imports_no_backend():
    """Entries are imported on first use: ``import torchlike`` needs neither numba nor cupy."""
    code = ("import sys, torchlike; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numba', 'cupy') or 'cpu_backend' in m or 'cuda_backend' in m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(ROOT), check=True).stdout
    assert out.strip() == "[]"


def test_missing_backend_falls_back_with_its_reason():
    saved = fb.BACKENDS.get("cpu")
    backends.install({"cpu": "torchlike.no_such_backend:Nothing"})
    try:
        assert fb.get_backend_impl("cpu") is None
        sub = Graph()
        x = sub.add_input("x", TENSOR)
        sub.set_outputs([sub.create("aten::neg", [x]).output()])
        outer = Graph()
        node = outer.create("prim::FusionGroup", [outer.add_input("a", TENSOR)], [TENSOR],
                            {"Subgraph": sub})
        executor.clear_caches()
        reset_stats()
        (y,) = executor.run_fusion_group(node, np, [np.arange(3.0)])
        np.testing.assert_array_equal(y, -np.arange(3.0))
        assert stats()["fallbacks"] == {"backend unavailable: cpu": 1}
    finally:
        fb.register_backend("cpu", saved)
        executor.clear_caches()
    with pytest.raises(ValueError, match="module:attribute"):
        backends.load("torchlike.cpu_backend")


def test_layering():
    """No module imports a package of a higher layer; the two backends never import each
    other; the fuser imports no backend."""
    bad = []
    for rel, path in _modules():
        mine = _layer_of(rel)
        if mine is None:
            continue
        top = rel.split("/")[0].removesuffix(".py")
        for line, name, _ in _imports(rel, path):
            if not name.startswith("torchlike."):
                continue
            target = name.split(".")[1]
            theirs = LAYER.get(target)
            if theirs is None:
                continue
            if theirs > mine or (theirs == mine == LAYER["cpu_backend"] and target != top):
                bad.append(f"{rel}:{line} imports {name}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", ["fuser", "cpu_backend", "cuda_backend", "backends.py"])
def test_no_function_level_imports_but_optional_packages(package):
    """Imports inside functions are for optional third-party packages only (not to dodge an
    import cycle)."""
    bad = []
    for rel, path in _modules():
        if rel.split("/")[0] != package:
            continue
        for line, name, nested in _imports(rel, path):
            if nested and name.split(".")[0] not in OPTIONAL:
                bad.append(f"{rel}:{line} imports {name} in a function")
    assert not bad, "\n".join(bad)


# -- debug levels ---------------------------------------------------------------------------------

def _group():
    sub = Graph()
    x = sub.add_input("x", TENSOR)
    y = sub.create("aten::neg", [x]).output()
    sub.set_outputs([sub.create("aten::abs", [y]).output()])
    outer = Graph()
    node = outer.create("prim::FusionGroup", [outer.add_input("a", TENSOR)], [TENSOR],
                        {"Subgraph": sub})
    return node


@pytest.fixture
def debug(tmp_path, caplog):
    config.set_cache_dir(tmp_path)
    executor.clear_caches()
    reset_stats()
    caplog.set_level(logging.DEBUG, logger="torchlike")

    def set_level(level):
        config.set_debug(level)
        caplog.clear()
        return caplog
    yield set_level
    config.set_debug(0)
    config.set_cache_dir(None)
    executor.clear_caches()


@pytest.mark.parametrize("level", [1, 2])
def test_debug_logs_every_fallback_with_its_reason(debug, level):
    log = debug(level)
    node = _group()
    saved = fb.BACKENDS.get("cpu")
    backends.install({"cpu": "torchlike.no_such_backend:Nothing"})
    try:
        for n in (3, 4, 5):  # three signatures, three fallbacks of one reason
            executor.run_fusion_group(node, np, [np.arange(float(n))])
    finally:
        fb.register_backend("cpu", saved)
    lines = [r.getMessage() for r in log.records if "falls back" in r.getMessage()]
    assert len(lines) == 3 and all(s.endswith("backend unavailable: cpu") for s in lines), lines
    assert "float64[4]" in lines[1] and "float64[5]" in lines[2]
    assert stats()["fallbacks"] == {"backend unavailable: cpu": 3}


@pytest.mark.parametrize("level,shows_source", [(0, False), (1, False), (2, True)])
def test_debug_level_2_logs_generated_source(debug, level, shows_source):
    pytest.importorskip("numba")
    log = debug(level)
    node = _group()
    executor.run_fusion_group(node, np, [np.arange(4.0)])
    messages = [r.getMessage() for r in log.records]
    assert any("def tl_fused_" in m for m in messages) == shows_source
    assert any("running kernel" in m for m in messages) == (level >= 1)


# -- typed records ------------------------------------------------------------------------------

def test_output_plan_records_and_launchers():
    """A group returning an op result, its own input, a constant and the result again: the plan
    says where each comes from, and both backends' launchers assemble it."""
    from torchlike.fuser.backend import analyze, signature_of
    from torchlike.fuser.kernel_spec import (
        OutputKind,
        OutputSource,
        kernel_outputs,
        output_assembler,
        output_plan,
    )
    sub = Graph()
    x = sub.add_input("x", TENSOR)
    y = sub.create("aten::neg", [x]).output()
    c = sub.insert_constant(2.5)
    sub.set_outputs([y, x, c, y])
    args = [np.arange(4.0)]
    spec = analyze(sub, signature_of(args))
    written = kernel_outputs(spec)
    plan = output_plan(spec, written)
    assert plan == [OutputSource(OutputKind.KERNEL_OUTPUT, 0),
                    OutputSource(OutputKind.INPUT_PASSTHROUGH, 0),
                    OutputSource(OutputKind.CONSTANT, value=2.5),
                    OutputSource(OutputKind.KERNEL_OUTPUT, 0)]
    assert output_assembler(plan)(["R"], ["A"]) == ["R", "A", 2.5, "R"]
    assert output_assembler(plan[:1]) is None  # the kernel's results as they are
    for name in ("cpu", "cuda-emulated"):
        be = fb.get_backend_impl(name)
        ok, why = be.available()
        if not ok:
            continue
        source = be.generate(spec)
        assert source.info.uses_err is False and source.info["uses_err"] is False
        out = be.compile(source).bind(spec, None)(args)
        np.testing.assert_array_equal(out[0], -args[0])
        assert out[1] is args[0] and out[2] == 2.5 and out[3] is out[0]
