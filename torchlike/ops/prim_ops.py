"""``prim::`` ops other than control flow and constants (those are the interpreter's own), and
the ``aten::`` ops on Python scalars, strings and lists that scripted graphs use around them::

    %20 : int[] = aten::size(%x.1)
    %s.1 : str = aten::format(%17, %4, %n.1, %20)
     = prim::Print(%s.1)
     = prim::RaiseException(%63, %9)       # %63 = "AssertionError: n must be positive"

Runtime values: lists are Python lists, tuples Python tuples, ``Device`` a string ("cpu",
"cuda:0"), ``ScalarType`` c10's enum int, a function a callable or ``Graph`` (see functions.py).
"""
from __future__ import annotations

import builtins
import sys

from ..ir.graph import Graph
from ..ir.printer import format_float
from ..ir.types import (
    BOOL,
    DEVICE,
    DTYPE_TO_SCALAR_TYPE_ENUM,
    FLOAT,
    INT,
    NONE,
    NUMBER,
    STR,
    TENSOR,
    DictType,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)
from . import elementwise  # noqa: F401  (aten::eq and aten::ne, wrapped below)
from .functions import call_function, lookup_function
from .registry import REGISTRY, OpDef, defop, register
from .tensor_common import arg, wrap_dim


def _declared(node, types):
    """The output types the node already carries (what the graph's author wrote)."""
    return [o.type for o in node.outputs]


def _prim(name, impl, num_outputs=1, pure=True, infer=_declared, **facts):
    return register(OpDef(name, (), impl, category="prim", num_outputs=num_outputs, pure=pure,
                          infer=infer, **facts))


# -- tuples and lists ----------------------------------------------------------------------------

def _infer_list_construct(node, types):
    declared = node.outputs[0].type
    if isinstance(declared, ListType) and not declared.elem.is_tensor():
        return [declared]
    if types and all(isinstance(t, TensorType) for t in types):
        return [ListType(TENSOR)]
    return [declared]


# the ops whose Tensor[] result is pieces of their input, along one dim, that do not overlap
PIECES = frozenset(("aten::chunk", "aten::split", "aten::split_with_sizes", "aten::unsafe_chunk",
                    "aten::unsafe_split", "aten::unsafe_split_with_sizes"))


def _piece_types(node, elem):
    """The pieces' own shapes when the list is a ``chunk``/``split`` of a tensor of known shape
    with constant arguments (a list type has one element type, without them)."""
    src = node.inputs[0].node
    x = src.inputs[0].type if src is not None and src.kind in PIECES and src.inputs else None
    shape = x.shape if isinstance(x, TensorType) else None
    if shape is None or None in shape or not shape:
        return None
    n, dim = arg(src, 1), arg(src, 2, 0)
    if not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
        return None
    d = wrap_dim(dim, len(shape))
    length = shape[d]
    kind = src.kind.replace("unsafe_", "")
    if kind == "aten::split_with_sizes" and isinstance(n, list) and all(
            isinstance(v, int) for v in n):
        sizes = list(n)
    elif isinstance(n, int) and not isinstance(n, bool) and n > 0:
        step = -(-length // n) if kind == "aten::chunk" else n
        sizes = [min(step, length - i) for i in range(0, length, step)] if step else []
    else:
        return None
    if len(sizes) != len(node.outputs) or sum(sizes) != length:
        return None
    out = []
    for size in sizes:
        s = list(shape)
        s[d] = size
        out.append(TensorType(elem.dtype, tuple(s), None, elem.device, elem.requires_grad))
    return out


def _infer_unpack(node, types):
    t = types[0] if types else None
    if isinstance(t, TupleType) and len(t.elems) == len(node.outputs):
        return list(t.elems)
    if isinstance(t, ListType):
        pieces = _piece_types(node, t.elem) if isinstance(t.elem, TensorType) else None
        return pieces or [t.elem] * len(node.outputs)
    return _declared(node, types)


def _infer_tuple_index(node, types):
    t, i = types[0] if types else None, arg(node, 1)
    if isinstance(t, TupleType) and isinstance(i, int) and -len(t.elems) <= i < len(t.elems):
        return [t.elems[i]]
    return _declared(node, types)


# Not folded: tuples print like lists, so a folded tuple would not survive save/load as one.
_prim("prim::TupleConstruct", lambda xp, *xs: tuple(xs),
      infer=lambda node, types: [TupleType(tuple(types))], foldable=False)
_prim("prim::TupleUnpack", lambda xp, t: list(t), num_outputs=None, unpacks=True,
      infer=_infer_unpack)
_prim("prim::ListConstruct", lambda xp, *xs: list(xs), infer=_infer_list_construct)
# a dict from key, value, key, value, ... (TorchScript's ``{}``; its type is the one declared:
# annotate(Dict[str, Tensor], {}), which torch.overrides' checks leave in scripted nn modules)
_prim("prim::DictConstruct", lambda xp, *kv: dict(zip(kv[0::2], kv[1::2])), infer=_declared,
      foldable=False)
_prim("prim::ListUnpack", lambda xp, t: list(t), num_outputs=None, unpacks=True,
      infer=_infer_unpack)
_prim("prim::TupleIndex", lambda xp, t, i: t[i], infer=_infer_tuple_index)


# -- list mutation (TorchScript's ``ys.append(y)`` in a loop) -------------------------------------
# The list is a Python list the interpreter passes by reference, so a mutation is seen through
# every use of the value (``aten::cat(%ys)`` after the loop).  These ops are impure (never
# removed or merged) and the list they mutate is never folded into, or merged as, a constant
# (``passes.utils.is_pure``).

def _append(xp, items, x):
    items.append(x)
    return items


def _extend(xp, items, more):
    items.extend(more)


def _insert(xp, items, index, x):
    items.insert(index, x)


def _pop(xp, items, index=-1):
    if not items:
        raise IndexError("pop from empty list")
    if not -len(items) <= index < len(items):
        raise IndexError("pop index out of range")
    return items.pop(index)


def _set_item(xp, items, index, x):
    """``l[i] = x`` of a list, or ``d[k] = x`` of a dict (``torch._set_item(d, k, x)``)."""
    if isinstance(items, dict):
        items[index] = x
        return items
    if not -len(items) <= index < len(items):
        raise IndexError("list index out of range")
    items[index] = x
    return items


def _list_of(node, types, what):
    t = types[0] if types else None
    return [t.elem if what == "item" and isinstance(t, ListType) else t] if t is not None \
        else _declared(node, types)


# list methods a scripted function may call, and the op each records
LIST_METHODS = {"append": "aten::append", "extend": "aten::extend", "insert": "aten::insert",
                "pop": "aten::pop", "clear": "aten::clear"}
_MUTATOR = dict(category="other", python_name=None, pure=False, foldable=False, mutates_list=True)
defop("aten::append", "t[] self, t el", _append,
      infer=lambda n, t: _list_of(n, t, "list"), **_MUTATOR)
defop("aten::extend", "t[] self, t[] other", _extend, infer=lambda n, t: [], num_outputs=0,
      **_MUTATOR)
defop("aten::insert", "t[] self, int idx, t el", _insert, infer=lambda n, t: [], num_outputs=0,
      **_MUTATOR)
defop("aten::pop", "t[] self, int idx=-1", _pop, infer=lambda n, t: _list_of(n, t, "item"),
      **_MUTATOR)
defop("aten::_set_item", "t[] l, int idx, t el", _set_item,
      infer=lambda n, t: _list_of(n, t, "list"), **_MUTATOR)
defop("aten::clear", "t[] self", lambda xp, items: items.clear(), infer=lambda n, t: [],
      num_outputs=0, **_MUTATOR)
defop("aten::list", "t[] l", lambda xp, items: list(items), infer=lambda n, t: _list_of(n, t, "list"),
      category="other", python_name=None)


def _get_attr(xp, obj, name):
    if isinstance(obj, dict):
        return obj[name]
    return getattr(obj, name)


_prim("prim::GetAttr", _get_attr)


# -- values of tensors ---------------------------------------------------------------------------

def _device(xp, x) -> str:
    dev = getattr(x, "device", None)
    if type(x).__module__.startswith("cupy"):
        return f"cuda:{dev.id}"
    return "cpu"


def _dtype(xp, x) -> int:
    return DTYPE_TO_SCALAR_TYPE_ENUM[str(x.dtype)]


def _num_to_tensor(xp, v):
    """A Python number as a 0-d tensor: int64, float64 or bool, as ``at::scalar_to_tensor``."""
    dtype = "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "float64"
    return xp.asarray(v, dtype=dtype)


def _infer_num_to_tensor(node, types):
    dtype = {BOOL: "bool", INT: "int64", FLOAT: "float64"}.get(types[0] if types else None)
    return [TensorType(dtype, ())]


def _infer_unchecked_cast(node, types):
    """Optional[T] refines to T; a tensor keeps what is known about it."""
    t = types[0] if types else None
    if isinstance(t, OptionalType):
        return [t.elem]
    return [t] if isinstance(t, TensorType) else _declared(node, types)


_prim("prim::unchecked_cast", lambda xp, x: x, infer=_infer_unchecked_cast)
_prim("prim::device", _device, infer=lambda node, types: [DEVICE])
_prim("prim::dtype", _dtype, infer=lambda node, types: [INT])
# ``tensor.layout`` as an int: c10::Layout::Strided is 0, and every array here is strided (no
# sparse or mkldnn tensors).  ``torch.norm`` checks it before calling linalg_vector_norm.
_prim("prim::layout", lambda xp, x: 0, infer=lambda node, types: [INT])
_prim("prim::NumToTensor", _num_to_tensor, infer=_infer_num_to_tensor)
_prim("prim::Uninitialized", lambda xp: None)


# -- side effects and calls ----------------------------------------------------------------------

def script_str(value) -> str:
    """A value as TorchScript's ``print`` and ``str.format`` write it: ``1.`` for a float,
    ``[1, 2]``, ``(1, x)`` (strings inside containers unquoted), arrays as numpy prints them."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, list):
        return "[" + ", ".join(script_str(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(script_str(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return str(value)


def _print(xp, *args):
    sys.stdout.write(" ".join(script_str(a) for a in args) + "\n")   # sys.stdout at call time


_ASSERT_PREFIX = "AssertionError: "


def _raise(xp, message, cls=None):
    """``prim::RaiseException(msg, cls?)``: ``assert`` lowers to a message starting with
    "AssertionError: " and no class; ``raise ValueError(m)`` passes "builtins.ValueError"."""
    message = str(message)
    if cls is None:
        if message.startswith(_ASSERT_PREFIX):
            message = message[len(_ASSERT_PREFIX):]
        raise AssertionError(message)
    exc = getattr(builtins, str(cls).rpartition(".")[2], None)
    if isinstance(exc, type) and issubclass(exc, Exception):
        raise exc(message)
    raise RuntimeError(f"{cls}: {message}")


def _infer_call(node, types):
    src = node.inputs[0].node if node.inputs else None
    name = src.attrs.get("name") if src is not None and src.kind == "prim::Constant" else None
    fn = lookup_function(name) if isinstance(name, str) else None
    if isinstance(fn, Graph) and len(node.outputs) == 1:
        outs = [v.type for v in fn.outputs]
        return [outs[0] if len(outs) == 1 else TupleType(tuple(outs))]
    return _declared(node, types)


_prim("prim::Print", _print, num_outputs=0, pure=False, infer=lambda node, types: [],
      code_name="print")
_prim("prim::RaiseException", _raise, num_outputs=0, pure=False, infer=lambda node, types: [])
# prim::CallFunction(%f, *args): %f is a function value (see functions.py).  Not pure: the
# callee may print or raise.
_prim("prim::CallFunction", lambda xp, fn, *args: call_function(fn, args), num_outputs=None,
      pure=False, infer=_infer_call)


# -- aten ops on Python scalars, strings and lists -----------------------------------------------

def _size(xp, x, dim=None):
    if dim is None:
        return [int(s) for s in x.shape]
    if x.ndim == 0:
        raise IndexError(f"dimension specified as {dim} but tensor has no dimensions")
    return int(x.shape[wrap_dim(dim, x.ndim)])


def _infer_size(node, types):
    if len(node.inputs) == 1 or (len(types) > 1 and types[1] == NONE):  # x.size(), x.shape
        return [ListType(INT)]
    return [INT]


def _one_element(x, to):
    """A Python scalar from a number or a one-element tensor (``int(t)``, ``float(t)``)."""
    if hasattr(x, "dtype"):
        if x.size != 1:
            raise RuntimeError(f"a Tensor with {x.size} elements cannot be converted to Scalar")
        x = x.reshape(()).item()
    return to(x)


def _item(xp, x):
    if x.size != 1:
        raise RuntimeError(f"a Tensor with {x.size} elements cannot be converted to Scalar")
    return x.reshape(()).item()


def _scalar_type_of(t) -> Type:
    if isinstance(t, TensorType) and t.dtype is not None:
        return BOOL if t.dtype == "bool" else FLOAT if "float" in t.dtype else INT
    return NUMBER


def _len(xp, x):
    if hasattr(x, "ndim"):
        if x.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(x.shape[0])
    return len(x)


def _getitem(xp, container, index):
    if isinstance(container, dict):
        if index not in container:
            raise KeyError(index)  # TorchScript's message: the missing key
        return container[index]
    if isinstance(container, (list, tuple, str)) and not -len(container) <= index < len(container):
        raise IndexError(f"list index out of range (index {index}, length {len(container)})")
    return container[index]


def _infer_getitem(node, types):
    t = types[0] if types else None
    if isinstance(t, ListType):
        return [t.elem]
    if isinstance(t, DictType):
        return [t.value]
    if t == STR:
        return [STR]
    return _infer_tuple_index(node, types)


def _format(xp, fmt, *args):
    """``"{}"`` placeholders filled in order, values written as ``print`` writes them."""
    pieces = fmt.split("{}")
    if len(pieces) - 1 > len(args):
        raise RuntimeError(f"Too few arguments for format string: {fmt}")
    out = pieces[0]
    for piece, a in zip(pieces[1:], args):
        out += script_str(a) + piece
    return out


def _round_to_zero_floordiv(xp, a, b):
    """C division of ints (truncates toward zero): what loop unrolling emits."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _range_length(xp, lo, hi, step):
    if step == 0:
        raise RuntimeError("range() arg 3 must not be zero")
    return len(range(lo, hi, step))


_SCALAR = dict(category="other", python_name=None)
defop("aten::size", "Tensor self, int? dim=None", _size, infer=_infer_size, **_SCALAR)
defop("aten::dim", "Tensor self", lambda xp, x: int(x.ndim), infer=lambda n, t: [INT], **_SCALAR)
defop("aten::numel", "Tensor self", lambda xp, x: int(x.size), infer=lambda n, t: [INT],
      category="other")
defop("aten::Bool", "Tensor self", lambda xp, x: _one_element(x, bool),
      infer=lambda n, t: [BOOL], code_name="bool", **_SCALAR)
defop("aten::Int", "Tensor self", lambda xp, x: _one_element(x, int),
      infer=lambda n, t: [INT], code_name="int", **_SCALAR)
defop("aten::Float", "Tensor self", lambda xp, x: _one_element(x, float),
      infer=lambda n, t: [FLOAT], code_name="float", **_SCALAR)
defop("aten::ScalarImplicit", "Tensor self", _item,
      infer=lambda n, t: [_scalar_type_of(t[0] if t else None)], **_SCALAR)
defop("aten::item", "Tensor self", _item,
      infer=lambda n, t: [_scalar_type_of(t[0] if t else None)], **_SCALAR)
defop("aten::len", "t[] a", _len, infer=lambda n, t: [INT], **_SCALAR)
defop("aten::__getitem__", "t[] list, int idx", _getitem, infer=_infer_getitem, **_SCALAR)
defop("aten::__contains__", "t[] l, t item", lambda xp, c, item: item in c,
      infer=lambda n, t: [BOOL], **_SCALAR)
defop("aten::format", "str self", _format, infer=lambda n, t: [STR], **_SCALAR)
defop("aten::str", "t elem", lambda xp, v: script_str(v), infer=lambda n, t: [STR], **_SCALAR)
defop("aten::floordiv", "int a, int b", lambda xp, a, b: a // b,
      infer=lambda n, t: [FLOAT if FLOAT in t else INT], **_SCALAR)
defop("aten::__round_to_zero_floordiv", "int a, int b", _round_to_zero_floordiv,
      infer=lambda n, t: [INT], **_SCALAR)
defop("aten::__range_length", "int lo, int hi, int step", _range_length,
      infer=lambda n, t: [INT], **_SCALAR)
defop("aten::__derive_index", "int index, int start, int step",
      lambda xp, index, start, step: start + index * step, infer=lambda n, t: [INT], **_SCALAR)
# min / max of Python numbers or a list of them (``zip``'s trip count: prim::min(int[]))
for _fn in (builtins.min, builtins.max):
    defop(f"prim::{_fn.__name__}", "t a", lambda xp, a, *b, fn=_fn: fn(a, *b) if b else fn(a),
          infer=lambda n, t: [t[0].elem if isinstance(t[0], ListType) else t[0]] if t else [INT],
          **_SCALAR)
defop("aten::__not__", "bool self", lambda xp, a: not a, infer=lambda n, t: [BOOL], **_SCALAR)
defop("aten::__is__", "t1 self, t2 obj", lambda xp, a, b: a is b, infer=lambda n, t: [BOOL],
      **_SCALAR)
defop("aten::__isnot__", "t1 self, t2 obj", lambda xp, a, b: a is not b,
      infer=lambda n, t: [BOOL], **_SCALAR)


# -- list and string equality: TorchScript's aten::eq / aten::ne overloads ------------------

def _sequence_equality(kind: str, equal: bool) -> None:
    """TorchScript's ``aten::eq`` / ``aten::ne`` of two lists or strings (``x.size() ==
    y.size()``, ``reduction == "mean"``): one Python bool, not an elementwise comparison."""
    op, seq = REGISTRY[kind], (list, tuple, str)
    elementwise_impl = op.impl

    def impl(xp, a, b, *rest):
        if isinstance(a, seq) or isinstance(b, seq):
            same = (a if isinstance(a, str) else list(a)) == (b if isinstance(b, str) else list(b))
            return same == equal
        return elementwise_impl(xp, a, b, *rest)
    op.impl = impl


for _name, _equal in (("aten::eq", True), ("aten::ne", False)):
    _sequence_equality(_name, _equal)


def _list_concatenation() -> None:
    """TorchScript's ``aten::add`` of two lists (``[n, g] + list(x.size()[2:])``): a new list."""
    op = REGISTRY["aten::add"]
    elementwise_impl, elementwise_infer = op.impl, op.infer

    def impl(xp, a, b, *rest):
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return list(a) + list(b)
        return elementwise_impl(xp, a, b, *rest)

    def infer(node, types):  # None: the elementwise rule (shape_inference)
        if types and isinstance(types[0], ListType):
            return [types[0]]
        return elementwise_infer(node, types) if elementwise_infer else None
    op.impl, op.infer = impl, infer


_list_concatenation()
