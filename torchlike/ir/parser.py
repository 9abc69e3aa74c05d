"""``parse_graph(text)``: PyTorch's graph text (and our printer's) back into a ``Graph``.

Reads what ``str(torch.jit.trace(f, x).graph)`` and ``str(torch.jit.script(f).graph)`` print::

    graph(%x.1 : Tensor,
          %n.1 : int):
      %5 : bool = prim::Constant[value=1]() # f.py:3:4
      %x : Tensor = prim::Loop(%n.1, %5, %x.1) # f.py:3:4
        block0(%i : int, %x.11 : Tensor):
          %x.5 : Tensor = aten::mul(%x.11, %x.11) # f.py:4:12
          -> (%5, %x.5)
      %y : Float(2, 3) = prim::FusionGroup_0(%x)
      return (%y)
    with prim::FusionGroup_0 = graph(%0 : Float(2, 3)):
      ...

Value names are kept exactly.  A node printed ``ns::Name_N`` whose ``with ns::Name_N = graph``
section follows becomes kind ``ns::Name`` with the parsed section in ``attrs["Subgraph"]``; as in
PyTorch, each graph numbers its own groups from 0 and its sections follow it directly.
``str(parse_graph(str(g))) == str(g)``.  Any malformed text raises ``ParseError`` with the
1-based ``line`` and ``column`` and the offending line under the message.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional

import numpy as np

from .attributes import SUBGRAPH_ATTR, UnknownTensorValue
from .graph import Block, Graph, Node, Value
from .lexer import Cursor, ParseError
from .types import (
    BOOL,
    SCALAR_NAME_TO_DTYPE,
    ClassType,
    DictType,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
    UnionType,
    named_type,
)

__all__ = ["ParseError", "UnknownTensorValue", "parse_graph"]


_NAME = re.compile(r"%([\w.]+)")
_KIND = re.compile(r"([A-Za-z_]\w*)::([A-Za-z_]\w*)")
_GROUP_SUFFIX = re.compile(r"_(\d+)$")
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_ATTR_NAME = re.compile(r"[A-Za-z_]\w*")
_INT = re.compile(r"-?\d+")
_INT_OR_SPECIAL = re.compile(r"-?(?:\d+|nan|inf)")
_NUMBER = re.compile(r"-?(?:inf|nan|\d+\.?\d*(?:[eE][+-]?\d+)?)(?![\w.])")
_DEVICE = re.compile(r"[A-Za-z_]+(?::\d+)?")
_SIMPLE_TYPE = re.compile(r"[A-Za-z_][\w.]*(?:\([^()\n]*\))?")
_TENSOR_TABLE = re.compile(r"[^\[\]\"\n]*\[ (?:CPU|CUDA)?(\w+?)Type\{([\d,]*)\} \]")
_WITH = re.compile(r"with[ \t]+([A-Za-z_]\w*::[A-Za-z_]\w*)[ \t]*=[ \t]*")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
            "r": "\r", "t": "\t", "v": "\v"}


def _tensor_head(name: str):
    """``Float`` -> ("float32", rank known), ``FloatTensor`` -> ("float32", rank unknown)."""
    if name == "Tensor":
        return None, False
    if name in SCALAR_NAME_TO_DTYPE:
        return SCALAR_NAME_TO_DTYPE[name], True
    if name.endswith("Tensor") and name[:-6] in SCALAR_NAME_TO_DTYPE:
        return SCALAR_NAME_TO_DTYPE[name[:-6]], False
    return "", False


class _Parser(Cursor):
    def __init__(self, text: str):
        super().__init__(text)
        self.type_cache: Dict[str, Type] = {}
        self.defined: List[str] = []  # names in definition order, to close block scopes

    # -- graphs and blocks ----------------------------------------------------------------
    def graph(self) -> Graph:
        self.expect("graph", "(a graph starts with 'graph(')")
        self.expect("(", "after 'graph'")
        g = Graph()
        scope: Dict[str, Value] = {}
        self.params(g, g.block, scope)
        self.expect(":", "after graph inputs")
        self.end_of_line()
        groups: List[Node] = []  # nodes that may be fusion groups, in order of appearance
        self.body(g, g.block, scope, "return", groups)
        g.block.returns = self.value_list(scope, "return")
        self.end_of_line()
        self.subgraph_sections(groups)
        return g

    def params(self, g: Graph, block: Block, scope: Dict[str, Value]) -> None:
        """``%a : T, %b : T)`` (newlines allowed between parameters)."""
        self.ws_nl()
        if self.accept(")"):
            return
        while True:
            self.ws_nl()
            at = self.i
            name = self.match(_NAME, "a value name like '%x'").group(1)
            self.expect(":", "after value name")
            value = Value(name, self.type(), block=block)
            self.define(g, scope, value, at)
            block.params.append(value)
            self.ws_nl()
            if self.accept(")"):
                return
            if not self.accept(","):
                raise self.expected("',' or ')' in parameter list")

    def define(self, g: Graph, scope: Dict[str, Value], value: Value, at: int) -> None:
        if value.name in scope or value.name in g._names:
            raise self.error(f"redefinition of value %{value.name}", at)
        g.claim_name(value.name)
        scope[value.name] = value
        self.defined.append(value.name)

    def body(self, g: Graph, block: Block, scope: Dict[str, Value], end: str,
             groups: List[Node]) -> None:
        """Nodes up to and including the ``end`` keyword (``return`` or ``->``)."""
        while True:
            self.skip_blank_lines()
            self.ws()
            if self.i >= len(self.s):
                where = "graph" if end == "return" else "block"
                raise self.error(f"unexpected end of input: {where} not closed by '{end}'")
            if self.s.startswith(end, self.i):
                self.i += len(end)
                return
            if self.s.startswith("->", self.i) or self.s.startswith("return", self.i):
                raise self.expected(f"'{end}'")
            self.node(g, block, scope, groups)

    def node(self, g: Graph, block: Block, scope: Dict[str, Value], groups: List[Node]) -> None:
        outputs = []  # (name, type, position)
        if self.peek("%"):
            while True:
                at = self.i
                name = self.match(_NAME, "a value name like '%x'").group(1)
                self.expect(":", "after value name")
                outputs.append((name, self.type(), at))
                if not self.accept(","):
                    break
        elif not self.peek("="):
            raise self.expected("a node ('%name : Type = kind(...)'), 'block' or end of block")
        self.expect("=", "after node outputs")
        kind_m = self.match(_KIND, "an op kind like 'aten::mul'")
        attrs = self.attributes(outputs[0][1] if outputs else None) if self.peek("[") else {}
        self.expect("(", "after node kind")
        inputs = self.values_until(scope, ")", "after node inputs")
        if self.peek(", scope:"):  # debug scopes (inlined_graph): not kept
            while self.i < len(self.s) and self.s[self.i] != "\n" and \
                    not self.s.startswith(" #", self.i):
                self.i += 1
        source = None
        if self.accept("#"):
            if self.s.startswith(" ", self.i):
                self.i += 1
            end = self.s.find("\n", self.i)
            end = len(self.s) if end < 0 else end
            source = self.s[self.i:end].rstrip("\r")
            self.i = end
        self.end_of_line()
        node = Node(kind_m.group(), inputs, attrs, source)
        for name, t, at in outputs:
            value = Value(name, t, node=node)
            self.define(g, scope, value, at)
            node.outputs.append(value)
        block.append(node)
        if _GROUP_SUFFIX.search(node.kind):
            groups.append(node)
        self.blocks(g, node, scope, groups)

    def blocks(self, g: Graph, node: Node, scope: Dict[str, Value], groups: List[Node]) -> None:
        """``blockN(%p : T):`` ... ``-> (%v)`` sections following a node line."""
        while True:
            save = self.i
            self.skip_blank_lines()
            self.ws()
            if not self.s.startswith("block", self.i):
                self.i = save
                return
            self.i += 5
            at = self.i
            m = _INT.match(self.s, self.i)
            if not m or int(m.group()) != len(node.blocks):
                raise self.error(f"expected 'block{len(node.blocks)}', found "
                                 f"'block{m.group() if m else ''}'", at)
            self.i = m.end()
            self.expect("(", "after block name")
            block = node.add_block()
            mark = len(self.defined)
            self.params(g, block, scope)
            self.expect(":", "after block parameters")
            self.end_of_line()
            self.body(g, block, scope, "->", groups)
            block.returns = self.value_list(scope, "'->'")
            self.end_of_line()
            for name in self.defined[mark:]:  # block values are visible only inside the block
                del scope[name]
            del self.defined[mark:]

    def subgraph_sections(self, groups: List[Node]) -> None:
        """``with ns::Name_N = graph(...)`` sections, numbered 0, 1, ... for this graph."""
        count = 0
        while True:
            save = self.i
            self.skip_blank_lines()
            m = _WITH.match(self.s, self.i)
            if not m:
                self.i = save
                return
            name = m.group(1)
            node = next((n for n in groups if n.kind == name
                         and SUBGRAPH_ATTR not in n.attrs), None)
            if node is None or not name.endswith(f"_{count}"):
                self.i = save  # a section of an enclosing graph, or stray text
                return
            self.i = m.end()
            sub = self.graph()
            node.kind = name[:_GROUP_SUFFIX.search(name).start()]
            node.attrs[SUBGRAPH_ATTR] = sub
            count += 1

    # -- value references -----------------------------------------------------------------
    def ref(self, scope: Dict[str, Value]) -> Value:
        at = self.i
        name = self.match(_NAME, "a value like '%x'").group(1)
        value = scope.get(name)
        if value is None:
            raise self.error(f"undefined value %{name}", at)
        return value

    def values_until(self, scope: Dict[str, Value], close: str, context: str) -> List[Value]:
        values: List[Value] = []
        if self.accept(close):
            return values
        while True:
            values.append(self.ref(scope))
            if self.accept(close):
                return values
            if not self.accept(","):
                raise self.expected(f"'{close}' {context}")

    def value_list(self, scope: Dict[str, Value], after: str) -> List[Value]:
        self.expect("(", f"after {after}")
        return self.values_until(scope, ")", f"after {after} values")

    # -- types ----------------------------------------------------------------------------
    def type(self) -> Type:
        self.ws()
        m = _SIMPLE_TYPE.match(self.s, self.i)  # fast path: the same types repeat a lot
        if m and m.group() in self.type_cache:
            self.i = m.end()
            t = self.type_cache[m.group()]
        else:
            t = self.type_atom()
            if m and self.i == m.end():
                self.type_cache[m.group()] = t
        while True:
            if self.s.startswith("[]", self.i):
                self.i += 2
                t = ListType(t)
            elif self.s.startswith("?", self.i):
                self.i += 1
                t = OptionalType(t)
            else:
                return t

    def type_atom(self) -> Type:
        if self.accept("("):
            elems = []
            if not self.accept(")"):
                while True:
                    elems.append(self.type())
                    if self.accept(")"):
                        break
                    if not self.accept(","):
                        raise self.expected("',' or ')' in tuple type")
            return TupleType(tuple(elems))
        at = self.i
        m = _IDENT.match(self.s, self.i)
        if not m:
            raise self.error(f"bad type: expected a type, found {self.found()}")
        name = m.group()
        if name == "NamedTuple" and self.s.startswith("(", m.end()):
            self.i = m.end() + 1
            names, elems = [], []
            while not self.accept(")"):
                if names and not self.accept(","):
                    raise self.expected("',' or ')' in NamedTuple(...) type")
                self.ws()
                field_name = _IDENT.match(self.s, self.i)
                if not field_name:
                    raise self.error(f"bad type: expected a field name in NamedTuple(...), "
                                     f"found {self.found()}")
                self.i = field_name.end()
                self.expect(":", "after a NamedTuple field name")
                names.append(field_name.group())
                elems.append(self.type())
            return TupleType(tuple(elems), tuple(names))
        if name in ("Union", "Dict") and self.s.startswith("(", m.end()):
            self.i = m.end() + 1
            elems = [self.type()]
            while not self.accept(")"):
                if not self.accept(","):
                    raise self.expected(f"',' or ')' in {name}(...) type")
                elems.append(self.type())
            if name == "Union":
                return UnionType(tuple(elems))
            if len(elems) != 2:
                raise self.error(f"bad type: Dict takes a key and a value type, found "
                                 f"{len(elems)} types", at)
            return DictType(elems[0], elems[1])
        dtype, rank_known = _tensor_head(name)
        if dtype != "":
            self.i = m.end()
            return self.tensor_type(dtype, rank_known, name == "Tensor")
        scalar = named_type(name)
        if scalar is not None:
            self.i = m.end()
            return scalar
        if name.startswith("__torch__.") and not name.endswith("."):
            self.i = m.end()
            return ClassType(name)
        raise self.error(f"bad type '{name}'", at)

    def tensor_type(self, dtype: Optional[str], rank_known: bool, bare: bool) -> TensorType:
        """``Float(3, *, strides=[4, 1], requires_grad=0, device=cpu)`` and its shorter forms.

        PyTorch prints a tensor of unknown rank as ``Tensor``/``FloatTensor`` (plus any of
        ``(requires_grad=.., device=..)``) and a 0-d one as ``Float(requires_grad=0, ...)``."""
        if not self.s.startswith("(", self.i):
            return TensorType(dtype)
        self.i += 1
        dims: list = []
        strides = device = requires_grad = None
        saw_keyword = False
        if not self.accept(")"):
            while True:
                self.ws()
                key = _ATTR_NAME.match(self.s, self.i)
                if key and self.s.startswith("=", key.end()):
                    saw_keyword = True
                    self.i = key.end() + 1
                    if key.group() == "strides":
                        self.expect("[", "after 'strides='")
                        strides = []
                        if not self.accept("]"):
                            while True:
                                strides.append(int(self.match(_INT, "a stride").group()))
                                if self.accept("]"):
                                    break
                                self.expect(",", "between strides")
                        strides = tuple(strides)
                    elif key.group() == "requires_grad":
                        flag = self.match(_INT, "0 or 1 after 'requires_grad='").group()
                        requires_grad = bool(int(flag))
                    elif key.group() == "device":
                        device = self.match(_DEVICE, "a device like 'cpu' or 'cuda:0'").group()
                    else:
                        raise self.error(f"bad type: unknown tensor property '{key.group()}'",
                                         key.start())
                elif saw_keyword:
                    raise self.expected("a tensor property (strides=, requires_grad=, device=)")
                elif self.accept("*"):
                    dims.append(None)
                else:
                    dims.append(int(self.match(_INT, "a size, '*' or ')' in tensor type")
                                    .group()))
                if self.accept(")"):
                    break
                self.expect(",", "in tensor type")
        if dims or rank_known or (bare and not saw_keyword):
            shape = tuple(dims)
        else:
            shape = None
        if strides is not None and shape is not None and len(strides) != len(shape):
            raise self.error(f"bad type: {len(strides)} strides for {len(shape)} dims")
        return TensorType(dtype, shape, strides, device, requires_grad)

    # -- attributes -----------------------------------------------------------------------
    def attributes(self, out_type: Optional[Type]) -> dict:
        self.expect("[")
        attrs: dict = {}
        while True:
            at = self.i
            name = self.match(_ATTR_NAME, "an attribute name").group()
            if name in attrs:
                raise self.error(f"duplicate attribute '{name}'", at)
            self.expect("=", "after attribute name")
            attrs[name] = self.attr_value(out_type if name == "value" else None, top=True)
            if self.accept("]"):
                return attrs
            if not self.accept(","):
                raise self.expected("',' or ']' after attribute")

    def attr_value(self, out_type: Optional[Type], top: bool = False):
        s = self.s
        if top:  # a small tensor printed as a table, which starts with a space
            m = _TENSOR_TABLE.match(s, self.i)
            if m:
                self.i = m.end()
                return self.tensor_table(m)
        self.ws()
        if self.i >= len(s):
            raise self.expected("an attribute value")
        c = s[self.i]
        if c == '"':
            return self.string()
        if c == "{":
            return self.scalar_tensor(out_type)
        if c in "[(":
            close = "]" if c == "[" else ")"
            self.i += 1
            items: list = []
            trailing_comma = False
            while not self.accept(close):
                if items and not trailing_comma:
                    raise self.expected(f"',' or '{close}'")
                items.append(self.attr_value(None))
                trailing_comma = self.accept(",")
            if c == "(":
                return tuple(items)
            if trailing_comma:
                raise self.error("unexpected ',' before ']'")
            return items
        if s.startswith("<Tensor>", self.i):
            self.i += len("<Tensor>")
            return UnknownTensorValue()
        m = _NUMBER.match(s, self.i)
        if m:
            self.i = m.end()
            text = m.group()
            if _INT.fullmatch(text):
                v = int(text)
                return bool(v) if top and out_type == BOOL else v
            return float(text)
        for word, v in (("True", True), ("False", False), ("None", None)):
            if s.startswith(word, self.i) and not s[self.i + len(word):self.i + len(word) + 1] \
                    .isidentifier():
                self.i += len(word)
                return v
        if s.startswith("annotate(", self.i):
            return self.annotated()
        if c.isalpha() or c == "_":
            return self.type()
        raise self.expected("an attribute value")

    def annotated(self):
        """``annotate(List[int], [])``: how PyTorch prints an empty typed list constant; the
        value is the list (the node's output type already says its element type)."""
        s, depth = self.s, 0
        self.i += len("annotate(")
        while self.i < len(s) and not (depth == 0 and s[self.i] == ","):
            if s[self.i] in "\n()" or depth < 0:  # the type ends at its comma, on this line
                break
            depth += {"[": 1, "]": -1}.get(s[self.i], 0)
            self.i += 1
        if not self.accept(","):
            raise self.expected("',' after the type in annotate(...)")
        value = self.attr_value(None)
        self.ws()
        if not self.accept(")"):
            raise self.expected("')' closing annotate(...)")
        return value

    def string(self) -> str:
        s, i = self.s, self.i + 1
        out = bytearray()
        while True:
            if i >= len(s) or s[i] == "\n":
                raise self.error("unterminated string", self.i)
            c = s[i]
            if c == '"':
                break
            if c != "\\":
                out += c.encode("utf-8", "surrogateescape")
                i += 1
                continue
            e = s[i + 1:i + 2]
            if e in _ESCAPES:
                out += _ESCAPES[e].encode()
                i += 2
                continue
            # PyTorch's printQuotedString writes other bytes as 3 "octal" digits computed on a
            # signed char, so bytes >= 128 come out as chars in '0'-7 .. '0'+7.
            digits = s[i + 1:i + 4]
            if len(digits) != 3 or not all(41 <= ord(d) <= 55 for d in digits):
                raise self.error("bad escape in string", i)
            d0, d1, d2 = (ord(d) - 48 for d in digits)
            out.append((d0 * 64 + d1 * 8 + d2) & 0xFF)
            i += 4
        self.i = i + 1
        return out.decode("utf-8", "surrogateescape")

    def scalar_tensor(self, out_type: Optional[Type]) -> np.ndarray:
        """``{2}``, ``{0.797885}``: a one-element tensor constant, dtype and shape (0-d unless the
        output type says ``Float(1, 1, ...)``) from the output type."""
        at = self.i
        end = self.s.find("}", self.i)
        nl = self.s.find("\n", self.i)
        if end < 0 or 0 <= nl < end:
            raise self.error("unterminated '{' in tensor constant")
        text = self.s[self.i + 1:end].strip()
        if not _NUMBER.fullmatch(text):
            raise self.error(f"bad tensor constant '{{{text}}}'", at)
        dtype = out_type.dtype if isinstance(out_type, TensorType) else None
        is_float = not _INT.fullmatch(text)
        if dtype is None:
            dtype = "float64" if is_float else "int64"
        elif dtype == "bfloat16":
            dtype = "float32"  # numpy has no bfloat16; the value is exact in float32
        self.i = end + 1
        if dtype == "bool":
            value = np.array(float(text) != 0, dtype=bool)
        elif np.dtype(dtype).kind in "iu":
            if is_float:
                raise self.error(f"bad tensor constant '{{{text}}}' for an integer tensor", at)
            value = np.array(int(text), dtype=dtype)
        else:
            value = np.array(float(text), dtype=dtype)
        # PyTorch prints any one-element tensor as {v}: Float(1, strides=[1]) is shape (1,)
        shape = out_type.shape if isinstance(out_type, TensorType) else None
        if shape is not None and all(d == 1 for d in shape):
            value = value.reshape(tuple(shape))
        return value

    def tensor_table(self, m: "re.Match") -> UnknownTensorValue:
        """`` 1  2  3 [ CPULongType{3} ]``: exact data for integer/bool tables and for float
        tables PyTorch printed as integers (it does so only when every value is one: ``-1  0
        1 [ CPUFloatType{3} ]``, NaN and infinities included), else none (``1.5000`` or
        ``1.23457e+08`` are rounded)."""
        text = m.group()
        data = None
        dtype = SCALAR_NAME_TO_DTYPE.get(m.group(1))
        shape = tuple(int(d) for d in m.group(2).split(",") if d)
        if dtype is not None and dtype != "bfloat16":
            body = re.sub(r"\(\d+(?:,\.)+\)\s*=", " ", text[:text.rindex("[")])
            tokens = body.split()
            exact = _INT if dtype == "bool" or np.dtype(dtype).kind in "iu" else _INT_OR_SPECIAL
            if all(exact.fullmatch(t) for t in tokens) and len(tokens) == int(np.prod(shape)):
                parse = int if exact is _INT else float  # float("-0") is -0.0
                data = np.array([parse(t) for t in tokens], dtype=dtype).reshape(shape)
        return UnknownTensorValue(text, data)


def parse_graph(text: str) -> Graph:
    """Parse a graph printed by PyTorch (or by ``str(graph)``) into a ``Graph``.

        >>> g = parse_graph('''graph(%x : Float(2, 3)):
        ...   %1 : float = prim::Constant[value=2.]()
        ...   %2 : Float(2, 3) = aten::mul(%x, %1) # f.py:3:0
        ...   return (%2)
        ... ''')
        >>> g.nodes[1].kind, g.nodes[1].source
        ('aten::mul', 'f.py:3:0')

    Raises ``ParseError`` (a ``SyntaxError``) naming the line and column for anything malformed.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_graph expects str, got {type(text).__name__}")
    p = _Parser(text)
    try:
        p.skip_blank_lines()
        g = p.graph()
        p.skip_blank_lines()
        if p.i < len(text):
            m = _WITH.match(text, p.i)
            if m:
                raise p.error(f"no node of kind {m.group(1)} for this subgraph section (each "
                              "graph's sections follow it, numbered _0, _1, ... in order)")
            raise p.error(f"unexpected text after the graph: {p.found()}")
        return g
    except ParseError:
        raise
    except (IndexError, ValueError, KeyError, TypeError, OverflowError, RecursionError) as e:
        raise p.error(f"malformed graph text ({type(e).__name__}: {e})") from None
