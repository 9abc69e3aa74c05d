"""torchlike: an elementwise fusion compiler for TorchScript-style graphs.

``torchlike.<op>`` is the functional namespace (one function per registry op, eager on numpy
and cupy arrays, recorded when traced); ``torchlike.ir`` the graph IR; ``torchlike.ops`` the op
registry.
"""
from . import ir, ops  # noqa: F401
from .functional import *  # noqa: F401,F403  (the op namespace: tl.tanh, tl.where, tl.float32...)

__version__ = "0.1.0"
from . import jit  # noqa
from . import nn  # noqa
from . import dask  # noqa  (a ScriptFunction called with Dask arrays runs per chunk)
