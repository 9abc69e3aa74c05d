"""What the tracer tells its user: the warning and error types, and where in their code it was.

Source locations name the innermost frame outside torchlike (and numpy's Python wrappers), so
graphs carry ``# model.py:12:0`` comments and errors point at the user's line, as PyTorch's do.
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Optional

import numpy as np

from ..errors import UnsupportedOpError

__all__ = ["TracerWarning", "UnsupportedAttributeError", "user_source", "warn_baked"]

_TORCHLIKE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep


class TracerWarning(UserWarning):
    """A Python-level decision (``if``, ``bool()``, ``x.shape``) was made on a traced value: the
    trace records the branch or the number the example produced and may not generalize."""


class UnsupportedAttributeError(UnsupportedOpError, AttributeError):
    """A method or attribute of a traced value that maps to no registry op (also an
    AttributeError, so ``hasattr`` keeps working)."""


def user_source() -> Optional[str]:
    """``file.py:LINE:0`` of the innermost frame outside torchlike (and numpy's wrappers)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_TORCHLIKE_DIR) or filename.startswith(_NUMPY_DIR)):
            return f"{os.path.basename(filename)}:{frame.f_lineno}:0"
        frame = frame.f_back
    return None


def warn_baked(message: str) -> None:
    """Warn that the example's value was baked into the trace.  Call it straight from the
    traced value's method, so the warning points at the line that called that method."""
    warnings.warn(message, TracerWarning, stacklevel=3)
