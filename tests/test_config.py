"""The fuser's switches: strict parsing of TORCHLIKE_* variables and their programmatic twins."""
import logging
import os

import numpy as np
import pytest

import torchlike as tl
from torchlike import jit
from torchlike.fuser import config


@pytest.fixture(autouse=True)
def _restore(monkeypatch):
    for var in list(os.environ):
        if var.startswith("TORCHLIKE_"):
            monkeypatch.delenv(var)
    yield
    monkeypatch.undo()
    config.reload_from_env()


@pytest.mark.parametrize("var, bad", [
    ("TORCHLIKE_FUSION", "yes"), ("TORCHLIKE_FUSER_BACKEND", "gpu"),
    ("TORCHLIKE_FUSER_STRICT", "2"), ("TORCHLIKE_DEBUG", "3"),
    ("TORCHLIKE_DONT_FUSE", "aten::tanh:not an op"),
])
def test_bad_value_names_the_variable(monkeypatch, var, bad):
    monkeypatch.setenv(var, bad)
    with pytest.raises(ValueError, match=var):
        config.reload_from_env()


def test_defaults(monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    config.reload_from_env()
    assert config.fusion_enabled() is True
    assert config.get_backend() == "auto"
    assert config.strict() is False
    assert config.debug_level() == 0
    assert config.dont_fuse() == frozenset()
    assert config.cache_dir() == os.path.join("/somewhere", "torchlike")


def test_environment_values(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCHLIKE_FUSION", "0")
    monkeypatch.setenv("TORCHLIKE_FUSER_BACKEND", "interpreter")
    monkeypatch.setenv("TORCHLIKE_FUSER_STRICT", "1")
    monkeypatch.setenv("TORCHLIKE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TORCHLIKE_DEBUG", "2")
    monkeypatch.setenv("TORCHLIKE_DONT_FUSE", "aten::tanh:aten::sigmoid")
    config.reload_from_env()
    assert config.fusion_enabled() is False
    assert config.get_backend() == "interpreter"
    assert config.strict() is True
    assert config.cache_dir() == str(tmp_path)
    assert config.debug_level() == 2
    assert config.dont_fuse() == {"aten::tanh", "aten::sigmoid"}


@pytest.mark.parametrize("text, expected", [
    ("aten::tanh:aten::sigmoid", {"aten::tanh", "aten::sigmoid"}),
    ("aten::tanh, aten::sigmoid", {"aten::tanh", "aten::sigmoid"}),
    ("tanh:prim::ConstantChunk", {"aten::tanh", "prim::ConstantChunk"}),
    ("", set()),
])
def test_dont_fuse_syntax(text, expected):
    config.set_dont_fuse(text)
    assert config.dont_fuse() == expected


def test_twins_and_generation():
    g = config.generation
    config.set_fusion_enabled(False)
    assert not config.fusion_enabled()
    config.set_backend("cpu")
    assert config.get_backend() == "cpu"
    with pytest.raises(ValueError, match="backend"):
        config.set_backend("tpu")
    config.set_strict(True)
    assert config.strict()
    config.set_debug(2)
    assert config.debug_level() == 2
    with pytest.raises(ValueError):
        config.set_debug(3)
    config.set_dont_fuse(["aten::mul"])
    assert config.dont_fuse() == {"aten::mul"}
    config.set_cache_dir("/tmp/x")
    assert config.cache_dir() == "/tmp/x"
    config.set_cache_dir(None)
    assert config.cache_dir().endswith("torchlike")
    assert config.generation > g


def test_all_exports_exist():
    for name in config.__all__:
        assert hasattr(config, name)


@pytest.mark.parametrize("text, unknown, near", [
    ("aten::tanhh", "aten::tanhh", "aten::tanh"),
    ("tanh,sigmod", "aten::sigmod", "aten::sigmoid"),
    ("prim::FusionGrop", "prim::FusionGrop", None),
])
def test_dont_fuse_unknown_op_names_it_and_the_nearest(monkeypatch, text, unknown, near):
    with pytest.raises(ValueError, match=f"unknown op '{unknown}'") as e:
        config.set_dont_fuse(text)
    if near:
        assert "did you mean" in str(e.value) and near in str(e.value)
    monkeypatch.setenv("TORCHLIKE_DONT_FUSE", text)
    with pytest.raises(ValueError, match="TORCHLIKE_DONT_FUSE"):
        config.reload_from_env()


def _debug_lines(level, caplog, tmp_path, scale=2.0):
    """The ``torchlike`` log lines of a first call of a small traced function at ``level``
    (``scale`` makes a kernel no earlier test has generated in this process)."""
    config.set_cache_dir(tmp_path)
    config.set_debug(level)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    fn = jit.trace(lambda a: tl.tanh(a * scale) + tl.matmul(a, a.T).sum(), (x,))
    with caplog.at_level(logging.DEBUG, logger="torchlike"):
        fn(x)
    return [r.getMessage() for r in caplog.records if r.name == "torchlike"]


def test_debug_level_1_logs_one_line_per_fusion_decision(caplog, tmp_path):
    lines = _debug_lines(1, caplog, tmp_path)
    assert any(line.startswith("fuser: formed prim::FusionGroup of 3 op(s)") and "aten::tanh"
               in line for line in lines), lines
    assert any(line.startswith("fuser: refused aten::matmul") and "not an elementwise op" in line
               for line in lines), lines
    assert not any("graph after" in line or "def tl_fused" in line for line in lines), lines
    assert all("\n" not in line for line in lines)


def test_debug_level_2_adds_graphs_after_each_pass_and_source(caplog, tmp_path):
    lines = _debug_lines(2, caplog, tmp_path, scale=3.0)
    after = [line.split(":")[0] for line in lines if line.startswith("graph after")]
    assert after == ["graph after inline_functions", "graph after infer_types",
                     "graph after simplify_tuples",
                     "graph after propagate_constants",
                     "graph after eliminate_common_subexpressions",
                     "graph after eliminate_dead_code", "graph after fuse"], after
    assert any("def tl_fused" in line for line in lines), "no generated source logged"
    assert any(line.startswith("fuser: formed prim::FusionGroup") for line in lines)


def test_debug_level_0_logs_nothing(caplog, tmp_path):
    assert _debug_lines(0, caplog, tmp_path) == []
