"""Typed errors.  Every error raised while running a graph names the node and its source line."""


class TorchlikeError(Exception):
    """Base class of torchlike's own errors."""


class UnsupportedOpError(TorchlikeError, NotImplementedError):
    """An op kind with no registry entry, or a use of an op the registry cannot honour."""


class ExecutionError(TorchlikeError, RuntimeError):
    """A node failed at run time; the message starts with the node and its source comment."""

    def __init__(self, message: str, node=None):
        super().__init__(message)
        self.node = node


class IntegerDivisionByZeroError(ExecutionError, ZeroDivisionError):
    """Integer ``div``/``floor_divide``/``remainder``/``fmod`` by zero (PyTorch raises too)."""


class FusionError(TorchlikeError, RuntimeError):
    """A fusion group could not be compiled and strict mode forbids falling back."""


class ScriptError(TorchlikeError, SyntaxError):
    """Python source outside the scriptable subset; the message quotes the line with a caret."""
