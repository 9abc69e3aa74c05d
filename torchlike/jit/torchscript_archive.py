"""Loading a TorchScript archive written by PyTorch (``torch.jit.save``), without PyTorch.

The archive is a zip whose entries sit under one folder named after the file::

    cell/data.pkl                      the module tree and its tensors (torchscript_unpickler)
    cell/data/0, cell/data/1, ...      raw storages
    cell/constants.pkl                 tensor constants of the code (CONSTANTS.c0 ...)
    cell/code/__torch__.py             the classes of the main script, as TorchScript source
    cell/code/__torch__/torch/nn/modules/linear.py
    cell/version or cell/.data/version the file format version (1 to 10 for PyTorch 1.x-2.13)
    cell/byteorder                     "little" or "big" (absent in old archives: little)

``load_torchscript(path)`` reads the code (``torchscript_code``), unpickles the module tree with
the restricted unpickler, builds one ``ScriptModule`` per module object (parameters and buffers
as numpy views of the storages, other attributes as they were saved, ``Final`` constants of the
class) and compiles each ``forward`` with the scripter, children first (a ``forward`` saved
overloaded, as ``forward__0``, ``forward__1``: each overload that compiles; a call picks the
first that fits, ``ScriptModule.pick_overload``).  A function saved with
``torch.jit.save`` is a ``PlaceholderModule`` holding only ``forward``: it comes back as a
``ScriptFunction``.  Nothing from the file is executed, and ``torch`` is never imported.
"""
from __future__ import annotations

import io
import os
import re
import zipfile
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ScriptError
from ..frontend.script import script_graph
from ..ir.graph import Graph
from .script_function import ScriptFunction
from .script_module import ScriptModule
from .serialization import SerializationError
from .torchscript_code import (
    ArchiveClass,
    ArchiveCode,
    ArchiveLowering,
    ArchiveMembers,
    annotation_type,
)
from .torchscript_unpickler import ArchiveObject, unpickle

__all__ = ["MAX_VERSION", "MIN_VERSION", "is_torchscript_archive", "load_torchscript"]

MIN_VERSION, MAX_VERSION = 1, 10  # caffe2/serialize/versions.h, PyTorch 1.x to 2.13
_PLACEHOLDER = "__torch__.PlaceholderModule"
_OVERLOAD = re.compile(r"forward__\d+")


def _where(path) -> str:
    return os.fspath(path) if isinstance(path, (str, os.PathLike)) else "<archive>"


def _prefix(names: List[str]) -> Optional[str]:
    """The folder holding ``data.pkl`` (``cell/``), or None when this is not such an archive."""
    for n in names:
        parts = n.split("/")
        if len(parts) == 2 and parts[1] == "data.pkl":
            return parts[0] + "/"
    return None


def is_torchscript_archive(path) -> bool:
    """Whether ``path`` is a zip laid out as PyTorch's TorchScript archives are (a folder with
    ``data.pkl`` and ``code/``) rather than a torchlike archive (``meta.json``)."""
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    finally:
        if hasattr(path, "seek"):
            path.seek(0)
    if "meta.json" in names:
        return False
    prefix = _prefix(names)
    if prefix is None:  # PyTorch 1.0-1.2 (format version 1): model.json, refused clearly
        return any(n.count("/") == 1 and n.endswith("/model.json") for n in names)
    return any(n.startswith(prefix + "code/") for n in names)


class _Archive:
    """The zip, its folder and how to read its members with clear errors."""

    def __init__(self, z: zipfile.ZipFile, where: str):
        self.z, self.where = z, where
        names = z.namelist()
        self.names = set(names)
        prefix = _prefix(names)
        if prefix is None and any(n.endswith("/model.json") for n in names):
            raise self.fail("an archive of PyTorch 1.0-1.2 (model.json, file format version "
                            "1) is not supported: load and save it again with PyTorch 1.3 or "
                            "newer")
        if prefix is None:
            raise self.fail("no data.pkl: not a TorchScript archive")
        self.prefix = prefix

    def fail(self, message: str) -> SerializationError:
        return SerializationError(f"{self.where}: {message}")

    def read(self, name: str) -> bytes:
        try:
            return self.z.read(self.prefix + name)
        except KeyError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError) as e:
            raise self.fail(f"damaged archive member {self.prefix + name} ({e})") from None

    def has(self, name: str) -> bool:
        return self.prefix + name in self.names

    def version(self) -> int:
        for name in ("version", ".data/version"):
            if self.has(name):
                text = self.read(name).decode("ascii", "replace").strip()
                if not text.isdigit():
                    raise self.fail(f"the version record {name} reads {text!r}")
                v = int(text)
                if v > MAX_VERSION:
                    raise self.fail(f"file format version {v} is newer than this torchlike "
                                    f"reads ({MIN_VERSION} to {MAX_VERSION}, PyTorch 1.x to "
                                    f"2.13): save it with an older PyTorch, or upgrade")
                if v < MIN_VERSION:
                    raise self.fail(f"file format version {v} is not a TorchScript archive "
                                    f"version ({MIN_VERSION} to {MAX_VERSION})")
                return v
        raise self.fail("no version record (version or .data/version)")

    def big_endian(self) -> bool:
        if not self.has("byteorder"):
            return False
        order = self.read("byteorder").decode("ascii", "replace").strip()
        if order not in ("little", "big"):
            raise self.fail(f"unknown byte order {order!r}")
        return order == "big"

    def code(self, constants: Tuple[Any, ...]) -> ArchiveCode:
        code = ArchiveCode(constants)
        base = self.prefix + "code/"
        for full in sorted(self.names):
            if not (full.startswith(base) and full.endswith(".py")):
                continue
            rel = full[len(base):-3]
            if not (rel == "__torch__" or rel.startswith("__torch__/")):
                continue
            try:
                text = self.read("code/" + rel + ".py").decode("utf-8")
            except UnicodeDecodeError:
                raise self.fail(f"{full} is not UTF-8 text") from None
            code.add_file(text, full, rel.replace("/", "."))
        return code


def load_torchscript(path) -> Any:
    """The module (``ScriptModule``) or function (``ScriptFunction``) saved at ``path`` by
    ``torch.jit.save`` (module docstring).  Raises ``SerializationError`` for a damaged or
    newer archive or a refused pickle, ``ScriptError`` for code torchlike cannot compile
    (naming the op or construct and the archive's line)."""
    where = _where(path)
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise SerializationError(f"{where}: not a readable zip archive ({e})") from None
    with z:
        ar = _Archive(z, where)
        ar.version()
        big = ar.big_endian()
        storages: Dict[str, Any] = {}

        def record(prefix):
            def read(key: str) -> bytes:
                return ar.read(f"{prefix}/{key}")
            return read

        constants: Tuple[Any, ...] = ()
        if ar.has("constants.pkl"):
            loaded = unpickle(_required(ar, "constants.pkl"), record("constants"),
                              f"{where}: constants.pkl", big, {})
            constants = tuple(loaded) if isinstance(loaded, (tuple, list)) else ()
        root = unpickle(_required(ar, "data.pkl"), record("data"), f"{where}: data.pkl", big,
                        storages)
        code = ar.code(constants)
    if not isinstance(root, ArchiveObject):
        raise SerializationError(f"{where}: data.pkl holds a {type(root).__name__}, not a "
                                 f"module")
    builder = _ModuleBuilder(code, where)
    sm = builder.module(root)
    builder.compile(sm)
    if root.qualified_name == _PLACEHOLDER and not sm._parameters and not sm._buffers \
            and not sm._modules:
        return _as_function(sm)
    return sm


def _required(ar: _Archive, name: str) -> bytes:
    try:
        return ar.read(name)
    except KeyError:
        raise ar.fail(f"{name} is missing") from None


def _short_name(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


class _ModuleBuilder:
    """``ScriptModule``s from the unpickled objects and the archive's classes."""

    def __init__(self, code: ArchiveCode, where: str):
        self.code, self.where = code, where
        self.memo: Dict[int, ScriptModule] = {}
        self.compiled: set = set()

    def archive_class(self, obj: ArchiveObject) -> ArchiveClass:
        cls = self.code.classes.get(obj.qualified_name)
        if cls is None:
            raise SerializationError(f"{self.where}: data.pkl has an object of class "
                                     f"{obj.qualified_name}, whose code is not in the archive")
        return cls

    def module(self, obj: ArchiveObject) -> ScriptModule:
        if id(obj) in self.memo:
            return self.memo[id(obj)]
        cls = self.archive_class(obj)
        sm = ScriptModule(obj.qualified_name, "load", _short_name(obj.qualified_name))
        self.memo[id(obj)] = sm
        d = sm.__dict__
        d["_archive_class"] = cls
        sm._constants.update(cls.constants)
        for name, value in obj.attributes.items():
            if name in cls.parameters:
                sm._parameters[name] = value
            elif name in cls.buffers:
                sm._buffers[name] = value
            elif isinstance(value, ArchiveObject):
                sm._modules[name] = self.module(value)
            elif name == "training":
                d["training"] = bool(value)
            elif name not in cls.constants:
                d[name] = value
        d.setdefault("training", True)
        return sm

    def compile(self, sm: ScriptModule) -> None:
        """Compile ``sm``'s ``forward`` after its children's (a shared child once)."""
        if id(sm) in self.compiled:
            return
        self.compiled.add(id(sm))
        for child in sm._modules.values():
            if isinstance(child, ScriptModule):
                self.compile(child)
        cls: ArchiveClass = sm.__dict__["_archive_class"]
        if "forward" in cls.methods:
            self.compile_method(sm, cls, "forward")
            return
        # an overloaded forward (nn.LSTM's Tensor and PackedSequence inputs) is saved as
        # forward__0, forward__1, ...: each is compiled, a call picks the first that fits
        overloads = sorted((n for n in cls.methods if _OVERLOAD.fullmatch(n)),
                           key=lambda n: int(n[len("forward__"):]))
        errors = []
        for name in overloads:
            try:
                self.compile_method(sm, cls, name)
            except ScriptError as e:
                errors.append(e)
                sm.__dict__["_skipped_overloads"][name] = str(e)
        if overloads and len(errors) == len(overloads):
            raise errors[0]
        # (no forward at all: a container such as ModuleList; its children are compiled)

    def compile_method(self, sm: ScriptModule, cls: ArchiveClass, name: str) -> None:
        fn = cls.methods[name]
        fdef = fn.frame.fdef
        params = fdef.args.posonlyargs + fdef.args.args
        types = []
        for a in params[1:]:
            try:
                types.append(annotation_type(a.annotation))
            except ValueError as e:
                raise fn.frame.error(str(e), a.annotation or a) from None
        try:
            graph = script_graph(fn, module=ArchiveMembers(sm), lowering=ArchiveLowering,
                                 input_types=types)
        except ScriptError as e:
            raise ScriptError(f"{cls.qualified_name}.{name}: {e}") from None
        names = [a.arg for a in params]
        first_default = len(names) - len(fn.__defaults__)
        defaults = {n: v for n, v in zip(names[first_default:], fn.__defaults__)}
        if name == "forward":
            sm.__dict__["_forward_defaults"] = defaults
        else:
            sm.__dict__["_method_defaults"][name] = defaults
        sm._define_method(name, ScriptFunction(graph, name=name, input_names=names,
                                               kind="load"))


def _as_function(sm: ScriptModule) -> Any:
    """A saved function (``PlaceholderModule.forward``) without its ``self``."""
    method = sm._methods["forward"]
    graph: Graph = method.graph
    me = graph.inputs[0]
    if me.uses:
        return sm  # reads its placeholder module (self.training): keep it a module
    graph.block.params.remove(me)
    return ScriptFunction(graph, name="forward", input_names=method.input_names[1:],
                          kind="load")


def load_torchscript_bytes(data: bytes) -> Any:
    """``load_torchscript`` of an archive held in memory."""
    return load_torchscript(io.BytesIO(data))
