"""The source of a Python function being scripted: its AST, and locations in its file.

Graph nodes carry ``# file.py:LINE:COL`` comments and errors quote the offending line with a
caret, so positions in the dedented source that ``ast`` parsed are mapped back to the file.
"""
from __future__ import annotations

import ast
import inspect
import os
import textwrap
from typing import Any, Dict

from ..errors import ScriptError

__all__ = ["FunctionSource"]


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
