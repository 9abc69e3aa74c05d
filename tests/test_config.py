"""The fuser's switches: strict parsing of TORCHLIKE_* variables and their programmatic twins."""
import os

import pytest

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
    ("TORCHLIKE_FUSER_STRICT", "2"), ("TORCHLIKE_DEBUG", "4"),
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
    ("tanh:prim::Foo", {"aten::tanh", "prim::Foo"}),
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
    config.set_debug(3)
    assert config.debug_level() == 3
    with pytest.raises(ValueError):
        config.set_debug(7)
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
