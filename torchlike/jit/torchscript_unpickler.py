"""Reading the pickles of a PyTorch TorchScript archive without PyTorch, and without running
anything from the file.

``data.pkl`` holds the module tree: one object per module (``__torch__.MyCell`` ...) whose state
is a dict of its attributes, with tensors written as::

    torch._utils._rebuild_tensor_v2(
        persistent_id(("storage", torch.FloatStorage, "0", "cpu", 16)),   # data/0, 16 floats
        0, (4, 4), (4, 1), False, collections.OrderedDict())

``ArchiveUnpickler`` is a ``pickle.Unpickler`` whose ``find_class`` answers only an allowlist
(``ALLOWED_GLOBALS``: the tensor rebuild functions, the storage types, ``OrderedDict``,
``torch.device``, the ``torch.jit._pickle`` list builders) and the archive's own ``__torch__.*``
classes, which become plain attribute holders (``ArchiveObject``).  Any other global
(``os.system``, ``builtins.eval``) raises ``SerializationError`` naming it, when the unpickler
reaches it: before it could be called.  Storages are read by ``persistent_load`` from
``data/<key>`` once each (so tensors sharing a storage share one numpy buffer), as the storage's
dtype with the archive's byte order; a tensor is a strided view of its storage (dtype, shape,
strides and offset as saved), checked to lie inside it.
"""
from __future__ import annotations

import collections
import io
import pickle
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from .serialization import SerializationError

__all__ = ["ALLOWED_GLOBALS", "ArchiveObject", "ArchiveUnpickler", "STORAGE_DTYPES",
           "unpickle"]

# torch.<X>Storage -> numpy dtype (bfloat16 has no numpy dtype: read as uint16 bits, refused
# when used)
STORAGE_DTYPES: Dict[str, str] = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
    "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "UntypedStorage": "uint8",
}
# torch.float32 & co. as globals (``_rebuild_tensor_v3`` names the dtype)
_TORCH_DTYPES: Dict[str, str] = {
    "float64": "float64", "double": "float64", "float32": "float32", "float": "float32",
    "float16": "float16", "half": "float16", "int64": "int64", "long": "int64",
    "int32": "int32", "int": "int32", "int16": "int16", "short": "int16", "int8": "int8",
    "uint8": "uint8", "bool": "bool",
}


class StorageType:
    """A ``torch.<X>Storage`` global: only its dtype matters here."""

    def __init__(self, name: str):
        self.name, self.dtype = name, np.dtype(STORAGE_DTYPES[name])


class DType:
    """A ``torch.<dtype>`` global (``torch.float32``)."""

    def __init__(self, name: str):
        self.name, self.dtype = name, np.dtype(_TORCH_DTYPES[name])


class ArchiveObject:
    """An object of one of the archive's ``__torch__`` classes: its pickled state (the module's
    attributes by name) and the class's qualified name.  Nothing of the class's code runs."""

    qualified_name = "__torch__.?"

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, dict):
            raise SerializationError(f"{self.qualified_name}: the pickled state is a "
                                     f"{type(state).__name__}, not a dict of attributes")
        self.__dict__["state"] = dict(state)

    @property
    def attributes(self) -> Dict[str, Any]:
        return self.__dict__.get("state", {})


def _fail(message: str):
    raise SerializationError(message)


def _check_view(storage: np.ndarray, offset: int, size: Tuple[int, ...],
                stride: Tuple[int, ...], what: str) -> None:
    if len(size) != len(stride) or any(not isinstance(s, int) or s < 0 for s in size) \
            or not isinstance(offset, int) or offset < 0:
        _fail(f"{what}: bad tensor layout (offset {offset}, size {size}, stride {stride})")
    if any(s == 0 for s in size):
        return
    if any(st < 0 for st in stride):
        _fail(f"{what}: negative strides {stride} are not supported")
    last = offset + sum((s - 1) * st for s, st in zip(size, stride))
    if last >= storage.size:
        _fail(f"{what}: a tensor of size {size}, stride {stride} at offset {offset} does not "
              f"fit its storage of {storage.size} elements")


def _view(storage: np.ndarray, offset: int, size, stride) -> np.ndarray:
    size, stride = tuple(size), tuple(stride)
    _check_view(storage, offset, size, stride, "data.pkl")
    if any(s == 0 for s in size):
        return np.zeros(size, storage.dtype)
    base = storage[offset:]
    item = storage.dtype.itemsize
    return np.lib.stride_tricks.as_strided(base, size, tuple(st * item for st in stride))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _view(storage, storage_offset, size, stride)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if not isinstance(dtype, DType):
        _fail("_rebuild_tensor_v3 without a dtype")
    if storage.dtype != dtype.dtype:
        storage = storage.view(dtype.dtype)
    return _view(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None):
    return data


def _rebuild_parameter_with_state(data, requires_grad=False, backward_hooks=None, state=None):
    return data


def _device(name="cpu", index=None):
    return str(name) if index is None else f"{name}:{index}"


def _identity_list(items):
    return list(items)


def _restore_type_tag(value, type_str):
    return value


# (module, name) -> what it stands for while unpickling
ALLOWED_GLOBALS: Dict[Tuple[str, str], Any] = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch", "device"): _device,
    ("torch.jit._pickle", "build_intlist"): _identity_list,
    ("torch.jit._pickle", "build_doublelist"): _identity_list,
    ("torch.jit._pickle", "build_boollist"): _identity_list,
    ("torch.jit._pickle", "build_tensorlist"): _identity_list,
    ("torch.jit._pickle", "build_genericlist"): _identity_list,
    ("torch.jit._pickle", "restore_type_tag"): _restore_type_tag,
}
for _name in STORAGE_DTYPES:
    ALLOWED_GLOBALS[("torch", _name)] = StorageType(_name)
    ALLOWED_GLOBALS[("torch.storage", _name)] = StorageType(_name)
for _name in _TORCH_DTYPES:
    ALLOWED_GLOBALS[("torch", _name)] = DType(_name)


class ArchiveUnpickler(pickle.Unpickler):
    """A pickle reader that knows only ``ALLOWED_GLOBALS`` and ``__torch__`` classes (module
    docstring).  ``read_record(name)`` gives the bytes of ``data/<name>`` (or raises
    ``KeyError``); ``big_endian`` says how the archive stored its numbers."""

    def __init__(self, data: bytes, read_record: Callable[[str], bytes], where: str,
                 big_endian: bool = False, storages: Optional[Dict[str, np.ndarray]] = None):
        super().__init__(io.BytesIO(data))
        self.read_record, self.where, self.big_endian = read_record, where, big_endian
        self.storages: Dict[str, np.ndarray] = {} if storages is None else storages
        self.classes: Dict[str, type] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "__torch__" or module.startswith("__torch__."):
            qualified = f"{module}.{name}"
            cls = self.classes.get(qualified)
            if cls is None:  # a plain holder named after the archive's class
                cls = type(name, (ArchiveObject,), {"qualified_name": qualified})
                self.classes[qualified] = cls
            return cls
        found = ALLOWED_GLOBALS.get((module, name))
        if found is None and module in ("torch", "torch.storage") and name.endswith("Storage"):
            raise SerializationError(f"{self.where}: tensors stored as torch.{name} "
                                     f"(bfloat16, complex, quantized) are not supported by "
                                     f"torchlike")
        if found is None:
            raise SerializationError(
                f"{self.where}: refusing to load the global '{module}.{name}': a TorchScript "
                f"archive's pickles may only use PyTorch's tensor, storage and container "
                f"globals and the archive's own __torch__ classes (nothing was executed)")
        return found

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            _fail(f"{self.where}: unknown persistent id {pid!r}")
        _, stype, key, location, numel = pid[:5]
        if not isinstance(stype, StorageType):
            _fail(f"{self.where}: storage {key!r} has no known storage type")
        key = str(key)
        if key in self.storages:
            return self.storages[key]
        try:
            raw = self.read_record(key)
        except KeyError:
            raise SerializationError(f"{self.where}: the storage data/{key} is missing") \
                from None
        dtype = stype.dtype.newbyteorder(">" if self.big_endian else "<")
        if not isinstance(numel, int) or numel < 0 or len(raw) < numel * dtype.itemsize:
            _fail(f"{self.where}: the storage data/{key} has {len(raw)} bytes, fewer than "
                  f"{numel} elements of {stype.dtype}")
        arr = np.frombuffer(bytearray(raw[:numel * dtype.itemsize]), dtype=dtype)
        if dtype.byteorder not in ("=", "|") and not dtype.isnative:
            arr = arr.astype(stype.dtype)  # to the machine's order (a copy)
        self.storages[key] = arr
        return arr


def unpickle(data: bytes, read_record: Callable[[str], bytes], where: str,
             big_endian: bool = False, storages: Optional[Dict[str, np.ndarray]] = None) -> Any:
    """Unpickle ``data`` (module docstring); every failure is a ``SerializationError``
    naming ``where``."""
    try:
        return ArchiveUnpickler(data, read_record, where, big_endian, storages).load()
    except SerializationError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, MemoryError) as e:
        raise SerializationError(f"{where}: damaged pickle ({type(e).__name__}: {e})") from None
