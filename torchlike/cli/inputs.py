"""A graph's inputs from the command line: ``--input`` specs, ``--inputs`` and ``--params``.

A spec gives one graph input::

    float32[64,1024]     a tensor: a numpy dtype name and the shape ([] is 0-d), random values
    int=3                a scalar, for an input typed int; also float=0.5, bool=true
    x=float32[64,1024]   by name: NAME=SPEC, NAME being the graph's input name (x.1) or the
    n=int=3              name before PyTorch's ``.N`` suffix (x), when that is unambiguous

An ``.npz`` file (``--inputs``) maps its keys to input names the same way, or to positions
(``arr_0``, ``arr_1``, ... as ``numpy.savez`` names unnamed arrays, counting the inputs other
than a module's ``%self``); a 0-d array gives a scalar input.  A module input (``%self : __torch__.MyCell``, what
``torch.jit.script(module).graph`` starts with) takes its attributes from ``--params
FILE.npz``, keyed as the module's ``state_dict()`` (``W``, ``linear.weight``):
``prim::GetAttr[name="W"](%self)`` reads key ``W``.  Named specs give the input they name;
unnamed ones take, in order, the inputs nothing else gives.  An input still left out whose
graph type gives its dtype and every size (traced graphs: ``Float(3, 4, strides=[4, 1],
...)``) is made from that type.

Random values come from ``numpy.random.default_rng(seed)``, drawn input by input in the
graph's order: floats from the standard normal, signed integers from -9..9 without 0 (so an
integer division does not trip on zero), unsigned ones from 1..9, booleans at even odds.
"""
from __future__ import annotations

import difflib
import re
import zipfile
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import TorchlikeError
from ..ir.graph import Graph, Value
from ..ir.types import ANY, BOOL, FLOAT, INT, NUMBER, ClassType, OptionalType, TensorType

# numpy's names for the dtypes torchlike runs (bfloat16 has no numpy dtype).
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
SCALARS = ("int", "float", "bool")
_SUFFIX = re.compile(r"\.\d+$")  # PyTorch's unique-name suffix: x -> x.1, x.5
_POSITIONAL_KEY = re.compile(r"^arr_(\d+)$")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")
SPEC_HELP = "DTYPE[SHAPE] (e.g. float32[64,1024]) or int=VALUE, float=VALUE, bool=VALUE"


class InputError(TorchlikeError, ValueError):
    """A bad spec or npz file, or inputs that do not fit the graph."""


@dataclass(frozen=True)
class Spec:
    """One parsed ``--input``: a tensor (``dtype``, ``shape``) or a scalar (``scalar_type``,
    ``value``), with the input ``name`` it is for (None: the next input in order)."""

    text: str
    name: Optional[str] = None
    dtype: Optional[str] = None
    shape: Tuple[int, ...] = ()
    scalar_type: Optional[str] = None
    value: Any = None

    @property
    def is_tensor(self) -> bool:
        return self.dtype is not None


def _bad(text: str, why: str) -> InputError:
    return InputError(f"bad input spec {text!r}: {why}")


def _split_name(text: str, head: str) -> Tuple[Optional[str], str]:
    if "=" not in head:
        return None, head.strip()
    name, head = head.rsplit("=", 1)
    name = name.strip().lstrip("%")
    if not name or "=" in name or not re.fullmatch(r"[\w.]+", name):
        raise _bad(text, f"{name!r} is not an input name")
    return name, head.strip()


def _dtype(text: str, name: str) -> str:
    if name in DTYPES:
        return name
    if name == "bfloat16":
        raise _bad(text, "bfloat16 has no numpy dtype: give float32 or float16")
    if name in ("int", "float"):
        dtype = {"int": "int64", "float": "float32"}[name]
        raise _bad(text, f"{name!r} is not a dtype: a tensor is written with one, e.g. "
                         f"{dtype}[...]; a scalar {name}=VALUE")
    near = difflib.get_close_matches(name, DTYPES, n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    raise _bad(text, f"unknown dtype {name!r}{hint}: expected one of {', '.join(DTYPES)}")


def _shape(text: str, dims: str) -> Tuple[int, ...]:
    if not dims.strip():
        return ()
    shape = []
    for d in dims.split(","):
        d = d.strip()
        if not d.isdigit():
            raise _bad(text, f"{d!r} is not a size: sizes are integers >= 0, e.g. float32[2,3]")
        shape.append(int(d))
    return tuple(shape)


def _scalar(text: str, kind: str, value: str):
    v = value.strip()
    try:
        if kind == "int":
            return int(v)
        if kind == "float":
            return float(v)
    except ValueError:
        raise _bad(text, f"{v!r} is not {'an int' if kind == 'int' else 'a float'}") from None
    if v.lower() in _TRUE:
        return True
    if v.lower() in _FALSE:
        return False
    raise _bad(text, f"{v!r} is not a bool: write true or false")


def parse_spec(text: str) -> Spec:
    """The ``Spec`` that ``text`` writes; raises ``InputError`` quoting it and saying why."""
    body = text.strip()
    if body.endswith("]"):
        head, bracket, dims = body[:-1].partition("[")
        if not bracket:
            raise _bad(text, "a ']' without its '['")
        name, head = _split_name(text, head)
        return Spec(text, name, dtype=_dtype(text, head), shape=_shape(text, dims))
    if "[" in body:
        raise _bad(text, "a '[' without its ']'")
    if "=" in body:
        head, value = body.rsplit("=", 1)
        name, kind = _split_name(text, head)
        if kind in SCALARS:
            return Spec(text, name, scalar_type=kind, value=_scalar(text, kind, value))
        if kind in DTYPES:
            raise _bad(text, f"a tensor is written {kind}[SHAPE], e.g. {kind}[2,3]")
    raise _bad(text, f"expected {SPEC_HELP}, optionally after NAME=")


# -- matching names and positions to the graph's inputs -------------------------------------

def _index_of(graph: Graph, name: str, where: str) -> int:
    names = [v.name for v in graph.inputs]
    if name in names:
        return names.index(name)
    matches = [i for i, n in enumerate(names) if _SUFFIX.sub("", n) == name]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(f"%{n}" for n in names) or "none"
    if matches:
        raise InputError(f"{where}: {name!r} could be any of "
                         f"{', '.join('%' + names[i] for i in matches)}: use the full name")
    raise InputError(f"{where}: the graph has no input named {name!r} (its inputs: {listed})")


@dataclass
class Bound:
    """A graph input and where its value comes from: a spec, an npz key, or its own type."""

    param: Value
    spec: Optional[Spec] = None
    array: Optional[np.ndarray] = None
    origin: str = ""
    module: Optional[dict] = None  # a module input's attributes (nested by dotted key)


def _describe_type(param: Value) -> str:
    return f"%{param.name} : {param.type}"


def _place(slots: List[Optional[Bound]], index: int, bound: Bound) -> None:
    old = slots[index]
    if old is not None:
        raise InputError(f"input %{bound.param.name} is given twice: by {old.origin} and by "
                         f"{bound.origin}")
    slots[index] = bound


def load_npz(path: str, option: str = "--inputs") -> Dict[str, np.ndarray]:
    """The arrays of the ``.npz`` file at ``path``, by key (``option`` names it in errors)."""
    where = f"cannot read {option} {path}"
    try:
        if not zipfile.is_zipfile(path):
            open(path, "rb").close()  # a missing or unreadable file says so
            raise InputError(f"{where}: not an .npz file (numpy.savez writes one)")
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except InputError:
        raise
    except OSError as e:
        raise InputError(f"{where}: {e.strerror or e}") from None
    except (ValueError, zipfile.BadZipFile) as e:  # an object array, a damaged member
        raise InputError(f"{where}: {e}") from None


def module_attributes(arrays: Dict[str, np.ndarray], where: str) -> dict:
    """``{"linear.weight": w}`` -> ``{"linear": {"weight": w}}`` (``prim::GetAttr`` reads
    dicts as objects)."""
    root: dict = {}
    for key in sorted(arrays):
        node = root
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise InputError(f"{where}: key {key!r} is inside {part!r}, which is an array")
        if last in node:
            raise InputError(f"{where}: key {key!r} is both an array and a module")
        node[last] = arrays[key]
    return root


def bind(graph: Graph, specs: Sequence[Spec], arrays: Dict[str, np.ndarray],
         npz_name: str = "", module: Optional[Dict[str, np.ndarray]] = None,
         params_name: str = "") -> List[Bound]:
    """Where each of ``graph``'s inputs comes from (see the module docstring); raises
    ``InputError`` for a name the graph lacks, an input given twice or not at all, too many
    specs, or a value of the wrong kind.  ``module``: the ``--params`` arrays, for the
    graph's module input."""
    params = list(graph.inputs)
    slots: List[Optional[Bound]] = [None] * len(params)
    if module is not None:
        owners = [i for i, p in enumerate(params) if isinstance(p.type, ClassType)]
        if len(owners) != 1:
            raise InputError(f"--params {params_name}: the graph has "
                             f"{'no module input' if not owners else 'several module inputs'}"
                             " (%self : __torch__.Name) to take them")
        i = owners[0]
        slots[i] = Bound(params[i], origin=f"--params {params_name}",
                         module=module_attributes(module, f"--params {params_name}"))
    # arr_N: the N-th argument as the function's caller counts them (%self is not one).
    positions = [i for i, p in enumerate(params) if not isinstance(p.type, ClassType)]
    for key, array in arrays.items():
        where = f"--inputs {npz_name}, key {key}"
        m = _POSITIONAL_KEY.match(key)
        if m and key not in [p.name for p in params] and int(m.group(1)) < len(positions):
            i = positions[int(m.group(1))]
        else:
            i = _index_of(graph, key, f"--inputs {npz_name}")
        _place(slots, i, Bound(params[i], array=array, origin=where))
    for spec in (s for s in specs if s.name is not None):
        i = _index_of(graph, spec.name, f"--input {spec.text!r}")
        _place(slots, i, Bound(params[i], spec=spec, origin=f"--input {spec.text}"))
    free = [i for i, b in enumerate(slots)  # a module takes --params, never a spec
            if b is None and not isinstance(params[i].type, ClassType)]
    unnamed = [s for s in specs if s.name is None]
    if len(unnamed) > len(free):
        left = ", ".join(f"%{params[i].name}" for i in free)
        raise InputError(f"{len(unnamed)} unnamed --input specs, but the graph has "
                         f"{len(params)} input{'' if len(params) == 1 else 's'} "
                         f"({', '.join('%' + p.name for p in params)})"
                         + (f" and only {len(free)} left to give ({left})"
                            if len(free) < len(params) else ""))
    for i, spec in zip(free, unnamed):
        slots[i] = Bound(params[i], spec=spec, origin=f"--input {spec.text}")
    missing = []
    for i, param in enumerate(params):
        if slots[i] is None:
            spec = spec_from_type(param)
            if spec is None:
                missing.append(param)
            else:
                slots[i] = Bound(param, spec=spec, origin="its type in the graph")
    modules = [p for p in missing if isinstance(p.type, ClassType)]
    if modules:
        raise InputError(f"input {_describe_type(modules[0])} is a module: give its "
                         "attributes with --params FILE.npz (keys as in its state_dict())")
    if missing:
        raise InputError(
            f"no value for {', '.join(_describe_type(p) for p in missing)}: give "
            + ("one --input per graph input, in order, or by name (NAME=SPEC)" if len(params) > 1
               else "--input SPEC") + f"; a SPEC is {SPEC_HELP}")
    for b in slots:
        check_kind(b)
    return slots


def spec_from_type(param: Value) -> Optional[Spec]:
    """A spec for an input whose type gives its dtype and every size, else None."""
    t = param.type
    if (isinstance(t, TensorType) and t.dtype in DTYPES and t.shape is not None
            and all(d is not None for d in t.shape)):
        text = f"{t.dtype}[{','.join(str(d) for d in t.shape)}]"
        return Spec(text, dtype=t.dtype, shape=tuple(t.shape))
    return None


_SCALAR_KIND = {INT: ("int",), FLOAT: ("float", "int"), BOOL: ("bool",),
                NUMBER: ("int", "float")}


def check_kind(b: Bound) -> None:
    """A tensor for a tensor input, a scalar of the right kind for a scalar one."""
    t = b.param.type
    if isinstance(t, OptionalType):  # Tensor? takes a tensor, int? an int
        t = t.elem
    if b.module is not None or t == ANY:
        return
    if b.array is not None:
        given = "a tensor" if b.array.ndim else "a 0-d array"
        if isinstance(t, TensorType) or (t in _SCALAR_KIND and b.array.ndim == 0):
            return
    else:
        spec = b.spec
        given = "a tensor" if spec.is_tensor else {"int": "an int", "float": "a float",
                                                     "bool": "a bool"}[spec.scalar_type]
        if isinstance(t, TensorType) and spec.is_tensor:
            return
        if t in _SCALAR_KIND and spec.scalar_type in _SCALAR_KIND[t]:
            return
    if isinstance(t, TensorType):
        want = "a tensor: DTYPE[SHAPE]"
    elif t in _SCALAR_KIND:
        want = f"a scalar: {_SCALAR_KIND[t][0]}=VALUE"
    else:
        want = "nothing the command line can give (a list or a tuple)"
    raise InputError(f"input {_describe_type(b.param)} takes {want}, but {b.origin} gives "
                     f"{given}")


def make_values(bound: Sequence[Bound], seed: int) -> List[Any]:
    """The argument list: npz arrays as they are (0-d ones as Python scalars for scalar
    inputs), scalars as given, random tensors drawn in order from one seeded generator."""
    rng = np.random.default_rng(seed)
    out: List[Any] = []
    for b in bound:
        if b.module is not None:
            out.append(b.module)
        elif b.array is not None:
            t = b.param.type.elem if isinstance(b.param.type, OptionalType) else b.param.type
            out.append(b.array.item() if t in _SCALAR_KIND and b.array.ndim == 0 else b.array)
        elif b.spec.is_tensor:
            out.append(random_array(rng, b.spec.dtype, b.spec.shape))
        else:
            v = b.spec.value
            out.append(float(v) if b.param.type == FLOAT else v)
    return out


def random_array(rng: np.random.Generator, dtype: str, shape: Tuple[int, ...]) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "u":
        return rng.integers(1, 10, shape).astype(dt)
    if dt.kind == "i":
        magnitude = rng.integers(1, 10, shape)
        return np.where(rng.random(shape) < 0.5, -magnitude, magnitude).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def describe_value(v: Any) -> str:
    """``float32[64, 1024]`` for an array, ``int 3`` for a scalar."""
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return f"{v.dtype}[{', '.join(str(d) for d in v.shape)}]"
    if isinstance(v, dict):
        return "module (" + ", ".join(sorted(v)) + ")"
    return f"{type(v).__name__} {v!r}"
