"""The fuser's switches: environment variables parsed strictly, each with a programmatic twin.

=======================  ==============================  =====================================
variable                 values (default first)          twin
=======================  ==============================  =====================================
TORCHLIKE_FUSION         ``1`` | ``0``                   ``set_fusion_enabled`` / ``fusion_enabled``
TORCHLIKE_FUSER_BACKEND  ``auto`` | ``cpu`` | ``cuda``   ``set_backend`` / ``get_backend``
                         | ``interpreter``
TORCHLIKE_FUSER_STRICT   ``0`` | ``1``                   ``set_strict`` / ``strict``
TORCHLIKE_CACHE_DIR      a directory                     ``set_cache_dir`` / ``cache_dir``
TORCHLIKE_DEBUG          ``0`` | ``1`` | ``2``            ``set_debug`` / ``debug_level``
TORCHLIKE_DONT_FUSE      op kinds, see below             ``set_dont_fuse`` / ``dont_fuse``
=======================  ==============================  =====================================

* ``TORCHLIKE_FUSION=1`` (the default): ``trace``/``script`` fuse their graphs automatically;
  ``0`` runs them op by op.  Graphs that already hold fusion groups run them either way.
* ``TORCHLIKE_FUSER_BACKEND=auto`` compiles for CUDA when the inputs are cupy arrays and for the
  CPU (Numba) when they are numpy arrays; ``interpreter`` never compiles (no fallback counted).
* ``TORCHLIKE_FUSER_STRICT=1``: a group that cannot be compiled raises ``FusionError`` instead
  of falling back to the interpreter (tests use it to prove the compiled path ran).
* ``TORCHLIKE_CACHE_DIR``: where generated kernels persist; default
  ``$XDG_CACHE_HOME/torchlike``, else ``~/.cache/torchlike``.  An empty value means the default.
* ``TORCHLIKE_DEBUG``: 1 logs one line per fusion decision (an op refused and why, a group
  formed, a region too small to group, a fallback taken and why); 2 also the graph after each
  pass of a specialization and each generated kernel's source.  Through the ``logging`` logger
  ``"torchlike"`` to stderr.
* ``TORCHLIKE_DONT_FUSE``: op kinds never fused, separated by ``,`` or by a single ``:`` (a
  ``::`` belongs to the name): ``aten::tanh:aten::sigmoid`` == ``aten::tanh,aten::sigmoid``.
  A bare name means the ``aten::`` op (``tanh`` -> ``aten::tanh``).  A name that is not a
  registry op is an error naming it and the nearest known names.

A malformed value raises ``ValueError`` naming the variable and the accepted values, at import
time or from ``reload_from_env()``.  Every setter bumps ``generation`` so that the executor drops
dispatch decisions taken under other settings.
"""
from __future__ import annotations

import difflib
import logging
import os
import re
import sys
from typing import FrozenSet, Iterable, Union

from ..ops import registry

__all__ = ["set_fusion_enabled", "fusion_enabled", "set_backend", "get_backend", "set_strict",
           "strict", "set_cache_dir", "cache_dir", "set_debug", "debug_level", "set_dont_fuse",
           "dont_fuse", "reload_from_env", "BACKENDS"]

BACKENDS = ("auto", "cpu", "cuda", "interpreter")
_BOOLS = {"0": False, "1": True}
_DEBUG_LEVELS = ("0", "1", "2")
_OP_NAME = re.compile(r"^[A-Za-z_]\w*::[A-Za-z_]\w*$")
_SEPARATOR = re.compile(r",|(?<!:):(?!:)")  # a comma, or a ':' that is not half of '::'

logger = logging.getLogger("torchlike")


class _Settings:
    fusion = True
    backend = "auto"
    strict = False
    cache_dir = ""
    debug = 0
    dont_fuse: FrozenSet[str] = frozenset()


_settings = _Settings()
generation = 0  # bumped by every change: cached dispatch decisions are stale


def _changed() -> None:
    global generation
    generation += 1


def _choice(var: str, text: str, allowed) -> str:
    if text not in allowed:
        raise ValueError(f"{var}={text!r} is not valid: expected one of {', '.join(allowed)}")
    return text


def _parse_dont_fuse(text: str, var: str = "TORCHLIKE_DONT_FUSE") -> FrozenSet[str]:
    names = set()
    for piece in _SEPARATOR.split(text):
        piece = piece.strip()
        if not piece:
            continue
        name = piece if "::" in piece else f"aten::{piece}"
        if not _OP_NAME.match(name):
            raise ValueError(f"{var}: {piece!r} is not an op kind: expected names such as "
                             "aten::tanh, separated by ',' or ':'")
        if registry.lookup(name) is None:
            near = difflib.get_close_matches(name, list(registry.REGISTRY), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ValueError(f"{var}: unknown op {name!r} (not in torchlike's registry){hint}")
        names.add(name)
    return frozenset(names)


def _default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torchlike")


def reload_from_env() -> None:
    """Re-read every ``TORCHLIKE_*`` variable (raises ``ValueError`` on a malformed value)."""
    env = os.environ
    s = _Settings()
    s.fusion = _BOOLS[_choice("TORCHLIKE_FUSION", env.get("TORCHLIKE_FUSION", "1"), _BOOLS)]
    s.backend = _choice("TORCHLIKE_FUSER_BACKEND", env.get("TORCHLIKE_FUSER_BACKEND", "auto"),
                        BACKENDS)
    s.strict = _BOOLS[_choice("TORCHLIKE_FUSER_STRICT", env.get("TORCHLIKE_FUSER_STRICT", "0"),
                              _BOOLS)]
    s.cache_dir = env.get("TORCHLIKE_CACHE_DIR", "")
    s.debug = int(_choice("TORCHLIKE_DEBUG", env.get("TORCHLIKE_DEBUG", "0"), _DEBUG_LEVELS))
    s.dont_fuse = _parse_dont_fuse(env.get("TORCHLIKE_DONT_FUSE", ""))
    for name in ("fusion", "backend", "strict", "cache_dir", "dont_fuse"):
        setattr(_settings, name, getattr(s, name))
    set_debug(s.debug)
    _changed()


# -- the twins ----------------------------------------------------------------------------------

def set_fusion_enabled(enabled: bool) -> None:
    """Fuse traced and scripted functions automatically (``TORCHLIKE_FUSION``)."""
    _settings.fusion = bool(enabled)
    _changed()


def fusion_enabled() -> bool:
    return _settings.fusion


def set_backend(name: str) -> None:
    """``auto``, ``cpu``, ``cuda`` or ``interpreter`` (``TORCHLIKE_FUSER_BACKEND``)."""
    _settings.backend = _choice("backend", name, BACKENDS)
    _changed()


def get_backend() -> str:
    return _settings.backend


def set_strict(on: bool) -> None:
    """Raise ``FusionError`` instead of falling back (``TORCHLIKE_FUSER_STRICT``)."""
    _settings.strict = bool(on)
    _changed()


def strict() -> bool:
    return _settings.strict


def set_cache_dir(path: Union[str, os.PathLike, None]) -> None:
    """Where compiled kernels persist (``TORCHLIKE_CACHE_DIR``); None restores the default."""
    _settings.cache_dir = "" if path is None else os.fspath(path)
    _changed()


def cache_dir() -> str:
    return _settings.cache_dir or _default_cache_dir()


def set_debug(level: int) -> None:
    """0-2 (``TORCHLIKE_DEBUG``); a level >= 1 sends the ``torchlike`` logger to stderr."""
    level = int(_choice("debug level", str(int(level)), _DEBUG_LEVELS))
    _settings.debug = level
    if level and not any(getattr(h, "_torchlike", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[torchlike] %(message)s"))
        handler._torchlike = True
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if level else logging.NOTSET)
    _changed()


def debug_level() -> int:
    return _settings.debug


def set_dont_fuse(ops: Union[str, Iterable[str]]) -> None:
    """Op kinds never fused (``TORCHLIKE_DONT_FUSE``): a string in the variable's syntax or an
    iterable of names."""
    text = ops if isinstance(ops, str) else ",".join(ops)
    _settings.dont_fuse = _parse_dont_fuse(text, "dont_fuse")
    _changed()


def dont_fuse() -> FrozenSet[str]:
    return _settings.dont_fuse


reload_from_env()
