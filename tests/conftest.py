"""Shared test configuration: PyTorch, the optional oracle, and the one way tests get it.

* the ``torch`` fixture returns the ``torch`` module, or skips the test with a reason starting
  "needs torch" where it cannot be imported;
* the ``requires_torch`` marker skips the same way a test that reaches torch indirectly;
* a line of the terminal summary counts the tests that skipped for want of torch;
* ``strict_cpu``: the fuser's backend "cpu" in strict mode (a group that cannot compile raises
  instead of falling back), for the compiled-path tests; ``kernel_cache``: a fresh kernel cache
  directory for a module (``pytestmark = pytest.mark.usefixtures("kernel_cache")``);
  ``unfused``: fusion off for a module (the derivative-rule tables);
* the CPU backend's parallel rule is a plain size threshold of 2^16 elements here
  (``codegen.PARALLEL_WORK``, ``HEAVY_WEIGHT = 0``): the tests' input sizes choose the serial
  or parallel kernel they exercise; ``test_fuser_cpu`` tests the production rule itself.

Nothing imports torch at collection time: test modules stay importable without it, and only
the tests that use it skip.
"""
from __future__ import annotations

import functools

import pytest

TORCH_VERSION = "2.13.0"  # the oracle CI installs (.ci/run)
NEEDS_TORCH = "needs torch"  # every torch skip reason starts with this


@pytest.fixture(autouse=True, scope="session")
def _plain_parallel_threshold():
    from torchlike.cpu_backend import codegen
    saved = codegen.PARALLEL_WORK, codegen.HEAVY_WEIGHT
    codegen.PARALLEL_WORK, codegen.HEAVY_WEIGHT = 1 << 16, 0
    yield
    codegen.PARALLEL_WORK, codegen.HEAVY_WEIGHT = saved


@pytest.fixture
def strict_cpu():
    from torchlike.fuser import config
    saved = config.get_backend(), config.strict()
    config.set_backend("cpu")
    config.set_strict(True)
    yield
    config.set_backend(saved[0])
    config.set_strict(saved[1])


@pytest.fixture(scope="module")
def unfused():
    """Fusion off for a module (``pytestmark = pytest.mark.usefixtures("unfused")``): the
    derivative-rule tables test the rules; fused backward graphs are tested elsewhere."""
    from torchlike.fuser import config
    saved = config.fusion_enabled()
    config.set_fusion_enabled(False)
    yield
    config.set_fusion_enabled(saved)


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    from torchlike.fuser import config
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    yield
    config.set_cache_dir(None)


@functools.lru_cache(maxsize=None)
def _import_torch():
    """(torch, None), or (None, why it cannot be imported)."""
    try:
        import torch
    except ImportError as e:
        return None, f"{type(e).__name__}: {e}"
    return torch, None


def torch_or_skip():
    """The ``torch`` module; skips the calling test (reason "needs torch ...") without it."""
    torch, why = _import_torch()
    if torch is None:
        pytest.skip(f"{NEEDS_TORCH} ({why}): pip install torch=={TORCH_VERSION}")
    return torch


@pytest.fixture(scope="session")
def torch():
    """PyTorch, the oracle; the test skips ("needs torch ...") where it is not installed."""
    return torch_or_skip()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "requires_torch: skip (reason 'needs torch ...') where torch is missing")


def pytest_runtest_setup(item):
    if item.get_closest_marker("requires_torch") is not None:
        torch_or_skip()


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def pytest_terminal_summary(terminalreporter):
    """One line saying how many tests skipped because torch is not installed."""
    n = sum(1 for r in terminalreporter.stats.get("skipped", [])
            if _skip_reason(r).startswith(NEEDS_TORCH))
    if n:
        tests = "1 test needed torch and was" if n == 1 else f"{n} tests needed torch and were"
        terminalreporter.write_line(
            f"torch not installed: {tests} skipped (pip install torch=={TORCH_VERSION})")
