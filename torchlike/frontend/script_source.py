"""The source of a Python function being scripted: its AST, and locations in its file.

Graph nodes carry ``# file.py:LINE:COL`` comments and errors quote the offending line with a
caret, so positions in the dedented source that ``ast`` parsed are mapped back to the file.
"""
from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
from typing import Any, Dict, Optional, Set, Tuple

from ..errors import ScriptError
from ..ops.prim_ops import LIST_METHODS

__all__ = ["FunctionSource", "SourceFunction"]


class FunctionSource:
    """One Python function being compiled: its source, its AST and where its names come from.

    Raises ``ScriptError`` when the source is unavailable or is not a ``def``."""

    def __init__(self, fn):
        self.fn = fn
        try:
            lines, first = inspect.getsourcelines(fn)
            path = inspect.getsourcefile(fn) or fn.__code__.co_filename
        except (OSError, TypeError) as e:
            raise ScriptError(f"cannot script '{getattr(fn, '__qualname__', fn)}': its source "
                              f"is not available ({e})") from None
        self.path, self.filename = path, os.path.basename(path)
        self.first = max(first, 1)
        self.lines = lines
        dedented = textwrap.dedent("".join(lines))
        self.dedented = dedented.splitlines()
        first_text = next((ln for ln in lines if ln.strip()), "")
        self.indent = len(first_text) - len(textwrap.dedent(first_text))
        try:
            tree = ast.parse(dedented)
        except SyntaxError as e:
            raise ScriptError(f"cannot parse the source of '{fn.__qualname__}': {e}") from None
        fdef = tree.body[0] if tree.body else None
        if not isinstance(fdef, ast.FunctionDef):
            what = "lambdas" if fn.__name__ == "<lambda>" else "this kind of callable"
            raise ScriptError(f"{what} cannot be scripted: '{fn.__qualname__}' needs a def "
                              f"statement (File \"{path}\", line {self.first})")
        self.fdef = fdef
        self.globals = fn.__globals__
        self.closure: Dict[str, Any] = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:
                pass

    @functools.cached_property
    def mutated_lists(self) -> Set[str]:
        """Names whose list the body changes in place (``ys.append(y)``): a list literal bound
        to one becomes a graph value where it is bound, not a compile-time sequence."""
        calls = [n for n in ast.walk(self.fdef) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                 and n.func.attr in LIST_METHODS]
        # ``torch.append(feats, y)``: how TorchScript's own code (a saved archive) writes it
        return {n.args[0].id if n.func.value.id == "torch" and n.args and isinstance(
            n.args[0], ast.Name) else n.func.value.id for n in calls}

    @classmethod
    def from_text(cls, text: str, filename: str, first_line: int, globals_: Dict[str, Any],
                  name: str) -> "FunctionSource":
        """The source of a function that exists only as text (a ``def`` starting at line
        ``first_line`` of the file ``filename``), its names resolved in ``globals_``: code read
        from an archive, compiled without ever being a Python function."""
        self = cls.__new__(cls)
        self.fn = None
        self.path, self.filename = filename, os.path.basename(filename)
        self.first = max(first_line, 1)
        self.lines = text.splitlines(keepends=True)
        dedented = textwrap.dedent(text)
        self.dedented = dedented.splitlines()
        first_text = next((ln for ln in self.lines if ln.strip()), "")
        self.indent = len(first_text) - len(textwrap.dedent(first_text))
        try:
            tree = ast.parse(dedented)
        except SyntaxError as e:
            raise ScriptError(f"cannot parse the source of '{name}' ({filename}, line "
                              f"{self.first + (e.lineno or 1) - 1}): {e.msg}") from None
        if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
            raise ScriptError(f"'{name}' ({filename}, line {self.first}) is not a def statement")
        self.fdef = tree.body[0]
        self.globals = globals_
        self.closure = {}
        return self

    def loc(self, node) -> tuple:
        """(line in the file, 1-based; column in the file's line, 0-based)."""
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        text = self.dedented[lineno - 1] if 0 < lineno <= len(self.dedented) else ""
        col = len(text.encode()[:col].decode(errors="ignore"))  # ast counts UTF-8 bytes
        return self.first + lineno - 1, col + self.indent

    def source(self, node) -> str:
        """``file.py:LINE:COL``, the comment graph nodes carry."""
        line, col = self.loc(node)
        return f"{self.filename}:{line}:{col}"

    def error(self, message: str, node) -> ScriptError:
        """A ``ScriptError``: ``message``, then the file, line and source text, with a caret."""
        line, col = self.loc(node)
        index = line - self.first
        text = self.lines[index].rstrip("\r\n") if 0 <= index < len(self.lines) else ""
        lead = len(text) - len(text.lstrip())
        caret = " " * (4 + max(col - lead, 0)) + "^"
        return ScriptError(f"{message}\n  File \"{self.path}\", line {line}\n"
                           f"    {text.strip()}\n{caret}")


class SourceFunction:
    """A function known only by its source text (``FunctionSource.from_text``): what the
    scripter compiles and inlines in place of a Python function object.  It answers the
    attributes the scripter reads of one (``__name__``, ``__code__`` as the identity key of
    its parsed source, ``__defaults__``)."""

    def __init__(self, frame: FunctionSource, name: str, defaults: Tuple[Any, ...] = (),
                 qualname: Optional[str] = None):
        self.frame = frame
        self.__name__ = name
        self.__qualname__ = qualname or name
        self.__defaults__ = tuple(defaults)
        self.__code__ = self

    def __repr__(self) -> str:
        return f"<SourceFunction {self.__qualname__} ({self.frame.filename}:{self.frame.first})>"
