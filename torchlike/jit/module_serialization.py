"""Saving and loading ``ScriptModule``s: one zip file, no pickle, nothing executed on load.

A saved module is a zip archive holding:

``meta.json``
    ``{"format": "torchlike.ScriptModule", "version": 1, "root": 0, "modules": [...]}``.
    Each entry of ``modules`` describes one module of the tree (a module shared by two parents
    is stored once and referenced twice): ``qualified_name``, ``original_name``, ``kind``
    (``"script"``/``"trace"``), ``training``, ``parameters``/``buffers``/``tensor_attributes``
    (name -> key in ``tensors.npz``, or null for a ``None`` parameter), ``non_persistent``
    (buffer names), ``attributes`` (bool/int/float/str/None/list values, as JSON),
    ``constants`` (the ``__constants__`` values, as JSON), ``children`` (name -> index in
    ``modules``, or null), ``methods`` (name -> ``{"input_names": [...], "defaults": {...}}``).
``graphs/<module>_<method>.txt`` and ``graphs/<module>_<method>.npz``
    Each compiled method's graph in PyTorch's text form and the exact values of its tensor
    constants (numbered as ``torchlike.jit.serialization.constant_nodes`` walks them).
``code/<module>_<method>.py``
    The method as ``.code`` prints it, for people reading the archive (never executed).
``tensors.npz``
    Every parameter, buffer and array attribute, once per array object (two modules sharing
    one array share it again after loading).  Written with ``np.savez``, read with
    ``allow_pickle=False``: the file holds data, never code.

A reader refuses another ``format``, a ``version`` newer than it knows, and any damage (a
truncated zip, a missing member, a graph that does not parse, an index out of range, a cycle of
children) with ``SerializationError`` naming the file and what is wrong.
"""
from __future__ import annotations

import io
import json
import zipfile
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from ..errors import TorchlikeError
from ..ir.parser import parse_graph
from .script_function import ScriptFunction
from .serialization import SerializationError, constant_nodes

# This module sits below script_module.py (ScriptModule.save calls save_module), so it names
# the class only in annotations and is handed the constructor when loading.
ScriptModule = Any

__all__ = ["FORMAT", "VERSION", "load_module", "save_module", "is_module_file"]

FORMAT = "torchlike.ScriptModule"
VERSION = 1
_JSON_SCALARS = (bool, int, float, str, type(None))


def _jsonable(v: Any) -> bool:
    if isinstance(v, _JSON_SCALARS):
        return True
    return isinstance(v, (list, tuple)) and all(_jsonable(x) for x in v)


# -- saving ------------------------------------------------------------------------------------
class _Writer:
    def __init__(self):
        self.modules: List[Dict[str, Any]] = []
        self.index: Dict[int, int] = {}
        self.tensors: Dict[str, np.ndarray] = {}
        self.tensor_keys: Dict[int, str] = {}
        self.members: Dict[str, bytes] = {}

    def tensor(self, a) -> str:
        key = self.tensor_keys.get(id(a))
        if key is None:
            key = self.tensor_keys[id(a)] = f"t{len(self.tensors)}"
            self.tensors[key] = np.asarray(a.get() if hasattr(a, "get") else a)
        return key

    def module(self, sm: ScriptModule) -> int:
        if id(sm) in self.index:
            return self.index[id(sm)]
        i = self.index[id(sm)] = len(self.modules)
        entry: Dict[str, Any] = {}
        self.modules.append(entry)
        entry.update(qualified_name=sm._qualified_name, original_name=sm.original_name,
                     kind=sm._kind, training=bool(sm.training))
        entry["parameters"] = {k: None if v is None else self.tensor(v)
                               for k, v in sm._parameters.items()}
        entry["buffers"] = {k: None if v is None else self.tensor(v)
                            for k, v in sm._buffers.items()}
        entry["non_persistent"] = sorted(sm._non_persistent_buffers_set)
        attrs, tensor_attrs = {}, {}
        for k, v in sm.__dict__.items():
            if k.startswith("_") or k in ("training", "original_name"):
                continue
            if hasattr(v, "dtype") and hasattr(v, "shape"):
                tensor_attrs[k] = self.tensor(v)
            elif _jsonable(v):
                attrs[k] = list(v) if isinstance(v, tuple) else v
        entry["attributes"], entry["tensor_attributes"] = attrs, tensor_attrs
        entry["constants"] = {k: (list(v) if isinstance(v, tuple) else v)
                              for k, v in sm._constants.items() if _jsonable(v)}
        entry["children"] = {k: None if c is None else self.module(c)
                             for k, c in sm._modules.items()}
        methods = {}
        defaults = sm.__dict__.get("_forward_defaults", {})
        for name, fn in sm._methods.items():
            stem = f"{i}_{name}"
            self.members[f"graphs/{stem}.txt"] = str(fn.graph).encode("utf-8")
            self.members[f"graphs/{stem}.npz"] = _constants_npz(fn)
            try:
                code = sm.code if name == "forward" else ""
            except TorchlikeError:
                code = ""
            self.members[f"code/{stem}.py"] = code.encode("utf-8")
            methods[name] = {"input_names": list(fn.input_names),
                             "defaults": {k: v for k, v in defaults.items() if _jsonable(v)}
                             if name == "forward" else {}}
        entry["methods"] = methods
        return i


def _constants_npz(fn: ScriptFunction) -> bytes:
    arrays = {f"c{i}": node.attrs["value"] for i, node in enumerate(constant_nodes(fn.graph))
              if isinstance(node.attrs.get("value"), np.ndarray)}
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def save_module(sm: ScriptModule, path) -> None:
    """Write ``sm`` (and its submodules) to ``path``, a filename or a binary file object."""
    w = _Writer()
    root = w.module(sm)
    meta = {"format": FORMAT, "version": VERSION, "root": root, "modules": w.modules}
    buf = io.BytesIO()
    np.savez(buf, **w.tensors)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("meta.json", json.dumps(meta, indent=1))
        z.writestr("tensors.npz", buf.getvalue())
        for name, data in w.members.items():
            z.writestr(name, data)


# -- loading -----------------------------------------------------------------------------------
def is_module_file(meta: Any) -> bool:
    """Whether a ``meta.json`` describes a saved module (else it may be a function)."""
    return isinstance(meta, dict) and meta.get("format") == FORMAT


class _Reader:
    def __init__(self, z: zipfile.ZipFile, path, new_module: Callable[..., Any]):
        self.z, self.path, self.new_module = z, path, new_module

    def fail(self, message: str) -> SerializationError:
        return SerializationError(f"{self.path}: {message}")

    def member(self, name: str) -> bytes:
        try:
            return self.z.read(name)
        except KeyError:
            raise self.fail(f"the archive lacks {name}") from None

    def expect(self, value: Any, types, what: str) -> Any:
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in
                                             (types if isinstance(types, tuple) else (types,))):
            raise self.fail(f"{what} should be {getattr(types, '__name__', types)}, got "
                            f"{type(value).__name__}")
        return value


def load_module(path, new_module: Callable[..., Any]) -> ScriptModule:
    """Read a module written by ``save_module``; ``SerializationError`` for anything else.
    ``new_module(qualified_name, kind, original_name)`` makes each (empty) ``ScriptModule``."""
    try:
        with zipfile.ZipFile(path) as z:
            return _load(_Reader(z, path, new_module))
    except SerializationError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError, UnicodeDecodeError,
            TorchlikeError) as e:
        raise SerializationError(f"{path}: damaged or not a saved torchlike module "
                                 f"({type(e).__name__}: {e})") from e


def _load(r: _Reader) -> ScriptModule:
    meta = json.loads(r.member("meta.json").decode("utf-8"))
    if not is_module_file(meta):
        raise r.fail(f"meta.json does not describe a {FORMAT}")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise r.fail(f"bad format version {version!r}")
    if version > VERSION:
        raise r.fail(f"saved in format version {version}, newer than this torchlike reads "
                     f"(version {VERSION}); upgrade torchlike")
    entries = r.expect(meta.get("modules"), list, "meta.json 'modules'")
    root = r.expect(meta.get("root"), int, "meta.json 'root'")
    npz = np.load(io.BytesIO(r.member("tensors.npz")), allow_pickle=False)
    tensors = {k: npz[k] for k in npz.files}
    modules = [_module_of(r, i, r.expect(e, dict, f"module {i}"), tensors)
               for i, e in enumerate(entries)]
    _link_children(r, entries, modules)
    if not 0 <= root < len(modules):
        raise r.fail(f"root module index {root} is out of range")
    return modules[root]


def _tensor(r: _Reader, tensors: Dict[str, np.ndarray], key: Any, where: str):
    if key is None:
        return None
    if not isinstance(key, str) or key not in tensors:
        raise r.fail(f"{where} names tensor {key!r}, which tensors.npz lacks")
    return tensors[key]


def _module_of(r: _Reader, i: int, e: Dict[str, Any], tensors) -> ScriptModule:
    qn = r.expect(e.get("qualified_name"), str, f"module {i} qualified_name")
    kind = e.get("kind", "script")
    sm = r.new_module(qn, kind if kind in ("script", "trace") else "script",
                      e.get("original_name") if isinstance(e.get("original_name"), str) else None)
    d = sm.__dict__
    d["training"] = bool(e.get("training", True))
    for where, target in (("parameters", sm._parameters), ("buffers", sm._buffers)):
        for k, key in r.expect(e.get(where, {}), dict, f"module {i} {where}").items():
            target[k] = _tensor(r, tensors, key, f"module {i} {where} '{k}'")
    sm._non_persistent_buffers_set.update(
        r.expect(e.get("non_persistent", []), list, f"module {i} non_persistent"))
    for k, key in r.expect(e.get("tensor_attributes", {}), dict, f"module {i}").items():
        d[k] = _tensor(r, tensors, key, f"module {i} attribute '{k}'")
    for k, v in r.expect(e.get("attributes", {}), dict, f"module {i} attributes").items():
        if k.startswith("_") or not _jsonable(v):
            raise r.fail(f"module {i} attribute {k!r} is not a plain value")
        d[k] = v
    for k, v in r.expect(e.get("constants", {}), dict, f"module {i} constants").items():
        sm._constants[k] = tuple(v) if isinstance(v, list) else v
        d.setdefault(k, sm._constants[k])
    methods = r.expect(e.get("methods", {}), dict, f"module {i} methods")
    for name, m in methods.items():
        m = r.expect(m, dict, f"module {i} method {name!r}")
        stem = f"graphs/{i}_{name}"
        try:
            graph = parse_graph(r.member(stem + ".txt").decode("utf-8"))
        except TorchlikeError as err:
            raise r.fail(f"{stem}.txt does not parse: {err}") from err
        npz = np.load(io.BytesIO(r.member(stem + ".npz")), allow_pickle=False)
        consts = list(constant_nodes(graph))
        for key in npz.files:
            j = int(key[1:]) if key[1:].isdigit() else -1
            if not 0 <= j < len(consts):
                raise r.fail(f"{stem}.npz has {key} but the graph has {len(consts)} constants")
            consts[j].attrs["value"] = npz[key]
        names = r.expect(m.get("input_names"), list, f"{stem} input_names")
        if len(names) != len(graph.inputs):
            raise r.fail(f"{stem}: {len(names)} input names for {len(graph.inputs)} inputs")
        sm._define_method(name, ScriptFunction(graph, name=name, input_names=names, kind=sm._kind))
        if name == "forward":
            d["_forward_defaults"] = dict(r.expect(m.get("defaults", {}), dict, "defaults"))
    return sm


def _link_children(r: _Reader, entries: List[Dict[str, Any]],
                   modules: List[ScriptModule]) -> None:
    for i, e in enumerate(entries):
        for k, j in r.expect(e.get("children", {}), dict, f"module {i} children").items():
            if j is None:
                modules[i]._modules[k] = None
                continue
            if not isinstance(j, int) or isinstance(j, bool) or not 0 <= j < len(modules):
                raise r.fail(f"module {i} child {k!r} has a bad index {j!r}")
            modules[i]._modules[k] = modules[j]
    state: Dict[int, int] = {}
    position = {id(m): i for i, m in enumerate(modules)}

    def visit(i: int) -> None:  # a cycle would make every walk of the tree endless
        state[i] = 1
        for c in modules[i]._modules.values():
            if c is None:
                continue
            j = position[id(c)]
            if state.get(j) == 1:
                raise r.fail(f"module {j} contains itself")
            if j not in state:
                visit(j)
        state[i] = 2

    for i in range(len(modules)):
        if i not in state:
            visit(i)


def load_any(path) -> Optional[Dict[str, Any]]:
    """The ``meta.json`` of a torchlike archive at ``path``, or None when it has none or cannot
    be read (the function loader then says what is wrong with the file)."""
    try:
        with zipfile.ZipFile(path) as z:
            if "meta.json" not in z.namelist():
                return None
            return json.loads(z.read("meta.json").decode("utf-8"))
    except (zipfile.BadZipFile, OSError, ValueError, UnicodeDecodeError, EOFError):
        return None
