"""The lexical layer of the graph parser: a cursor over the text, tokens, and ``ParseError``.

``Cursor`` knows characters, whitespace, literal tokens and regular expressions, and turns a
position into a ``ParseError`` that names the 1-based line and column with the line itself::

    line 2, column 9: expected ')', found end of line
      %1 : Float(2, 3 = aten::mul(%x, %x)
            ^

The grammar (graphs, blocks, nodes, types, attribute values) is ``parser.py``.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import List, Optional

from ..errors import TorchlikeError


class ParseError(TorchlikeError, SyntaxError):
    """Malformed graph text.  ``line``/``column`` are 1-based; ``source_line`` is that line."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source_line: str = ""):
        self.line, self.column, self.source_line = line, column, source_line
        self.reason = message
        text = f"line {line}, column {column}: {message}\n{source_line}\n{' ' * (column - 1)}^"
        super().__init__(text)


_TOKEN = re.compile(r"%[\w.]+|->|\w+(?:::\w+)?|\S")


class Cursor:
    """A position ``i`` in the text ``s``, with the scanning primitives the parser is built on."""

    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self._line_starts: Optional[List[int]] = None

    # -- errors ---------------------------------------------------------------------------
    def error(self, message: str, at: Optional[int] = None) -> ParseError:
        at = self.i if at is None else min(at, len(self.s))
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer(r"\n", self.s)]
        row = bisect_right(self._line_starts, at) - 1
        start = self._line_starts[row]
        end = self.s.find("\n", start)
        line_text = self.s[start:] if end < 0 else self.s[start:end]
        return ParseError(message, row + 1, at - start + 1, line_text)

    def found(self, at: Optional[int] = None) -> str:
        at = self.i if at is None else at
        if at >= len(self.s):
            return "end of input"
        if self.s[at] == "\n":
            return "end of line"
        m = _TOKEN.match(self.s, at)
        return f"'{m.group()}'" if m else "whitespace"

    def expected(self, what: str) -> ParseError:
        return self.error(f"expected {what}, found {self.found()}")

    # -- lexing ---------------------------------------------------------------------------
    def ws(self) -> None:
        s, i = self.s, self.i
        while i < len(s) and s[i] in " \t\r":
            i += 1
        self.i = i

    def ws_nl(self) -> None:
        s, i = self.s, self.i
        while i < len(s) and s[i] in " \t\r\n":
            i += 1
        self.i = i

    def peek(self, text: str) -> bool:
        self.ws()
        return self.s.startswith(text, self.i)

    def accept(self, text: str) -> bool:
        if self.peek(text):
            self.i += len(text)
            return True
        return False

    def expect(self, text: str, context: str = "") -> None:
        if not self.accept(text):
            raise self.expected(f"'{text}'{' ' + context if context else ''}")

    def match(self, regex: "re.Pattern", what: str) -> "re.Match":
        self.ws()
        m = regex.match(self.s, self.i)
        if not m:
            raise self.expected(what)
        self.i = m.end()
        return m

    def end_of_line(self) -> None:
        self.ws()
        if self.i < len(self.s):
            if self.s[self.i] != "\n":
                raise self.expected("end of line")
            self.i += 1

    def skip_blank_lines(self) -> None:
        """Skip whitespace-only lines; leaves ``i`` at the start of the next non-blank line."""
        s, i, n = self.s, self.i, len(self.s)
        while True:
            j = i
            while j < n and s[j] in " \t\r":
                j += 1
            if j < n and s[j] == "\n":
                i = j + 1
                continue
            self.i = i if j < n else n
            return
