"""torchlike: an elementwise fusion compiler for TorchScript-style graphs."""
from . import ir, ops  # noqa: F401

__version__ = "0.1.0"
