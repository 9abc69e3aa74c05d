"""Run a graph as PyTorch prints it the three ways a user can (a plain helper module, as
``corpus_utils``): interpreted, fused, and fused in strict mode (a group that cannot compile
raises instead of falling back); and load a program's source as a module, which
``torch.jit.script`` needs (it reads the function's source file)."""
from __future__ import annotations

import importlib.util
from typing import Callable, List, Tuple

from torchlike import jit
from torchlike.fuser import config
from torchlike.ir import parse_graph

MODES = ("interpreted", "fused", "strict")


def graph_modes(text: str) -> List[Tuple[str, Callable]]:
    """(mode, run) for the graph ``text`` in each of ``MODES``; ``run(*args)`` parses anew."""
    def fused(strict):
        def run(*args):
            config.set_strict(strict)
            try:
                return jit.run(jit.fuse(parse_graph(text)), *args)
            finally:
                config.set_strict(False)
        return run
    return [("interpreted", lambda *a: jit.run(parse_graph(text), *a)),
            ("fused", fused(False)), ("strict", fused(True))]


def program_module(tmp_path, name: str, source: str):
    """``source`` written under ``tmp_path`` and imported as module ``name``."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
