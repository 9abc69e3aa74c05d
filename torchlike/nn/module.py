"""``Module`` and ``Parameter``: PyTorch's ``nn.Module`` bookkeeping over numpy arrays.

A module keeps its state the way PyTorch's does, in insertion-ordered dicts that
``jit.script(module)`` reads directly::

    _parameters   name -> np.ndarray or None    (assigned Parameters, stored as plain arrays)
    _buffers      name -> np.ndarray or None    (register_buffer; some of them non-persistent)
    _modules      name -> Module or None        (assigned submodules)
    training      a plain attribute             (train() / eval())

``__setattr__`` routes an assignment as PyTorch's does: a ``Parameter`` (or any array assigned
to a name that already is a parameter) goes to ``_parameters``, stored as the plain-ndarray view
of the same memory (never a copy); a ``Module`` to ``_modules``; a name that is a buffer to
``_buffers``; anything else to ``__dict__``.  ``state_dict()`` returns the live arrays, and
``load_state_dict`` copies into them in place (``np.copyto``), so a loaded array keeps its
identity.  There is no autograd: a parameter is just an array that the module owns.
"""
from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import numpy as np

__all__ = ["Module", "Parameter"]


class Parameter(np.ndarray):
    """A marker for "this array is a parameter": ``np.asarray(data).view(Parameter)``.

    Assigning one to a module attribute registers it; the module stores the plain-ndarray view
    of the same memory (the same view object each time, so a Parameter assigned to two modules
    is one shared parameter).  Results of arithmetic on a Parameter are plain arrays."""

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = np.empty((0,), np.float32)
        return _to_array(data, "parameter").view(cls)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        out = arr.view(np.ndarray) if isinstance(arr, np.ndarray) else arr
        return out[()] if return_scalar and isinstance(out, np.ndarray) else out

    def __repr__(self) -> str:
        return "Parameter containing:\n" + repr(self.view(np.ndarray))

    def __reduce__(self):
        return (Parameter, (self.view(np.ndarray).copy(),))


def _to_array(value: Any, what: str) -> np.ndarray:
    """``value`` as an ndarray sharing its memory (a torch tensor through ``.numpy()``)."""
    if not isinstance(value, np.ndarray) and callable(getattr(value, "numpy", None)):
        if callable(getattr(value, "detach", None)):
            value = value.detach()
        if callable(getattr(value, "cpu", None)):
            value = value.cpu()
        value = value.numpy()
    arr = np.asarray(value)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"cannot use '{type(value).__name__}' (dtype {arr.dtype}) as a {what}: "
                        "a numeric array is required")
    return arr


def _plain(value: Any, what: str) -> Optional[np.ndarray]:
    """The plain ndarray a module stores for ``value`` (the same object for the same input)."""
    if value is None:
        return None
    if type(value) is np.ndarray:
        return value
    if isinstance(value, Parameter):
        view = value.__dict__.get("_tl_plain")
        if view is None:
            view = value.__dict__["_tl_plain"] = value.view(np.ndarray)
        return view
    arr = _to_array(value, what)
    return arr if type(arr) is np.ndarray else arr.view(np.ndarray)


def _type_name(value: Any) -> str:
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _check_name(kind: str, name: Any, owner: "Module", table: Dict[str, Any]) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_type_name(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"" + (f", got: {name}" if kind == "module"
                                                           else ""))
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    if hasattr(owner, name) and name not in table:
        raise KeyError(f"attribute '{name}' already exists")


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class _IncompatibleKeys(NamedTuple):
    missing_keys: List[str]
    unexpected_keys: List[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    __str__ = __repr__


_FLOATING = "fc"  # dtype kinds that to(dtype) converts

# Set by torchlike.jit while it traces a module: asked first on every module call, it records a
# submodule called on traced values as prim::CallMethod; NotImplemented lets the call run.
_call_hook: Optional[Callable[["Module", tuple, dict], Any]] = None


class Module:
    """Base class of every module: subclasses call ``super().__init__()`` first, assign
    parameters and submodules as attributes and define ``forward``."""

    training: bool

    def __init__(self) -> None:
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()

    # -- calling ----------------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required "
                                  "\"forward\" function")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        hook = _call_hook
        if hook is not None:  # torchlike.jit is tracing a module
            result = hook(self, args, kwargs)
            if result is not NotImplemented:
                return result
        return self.forward(*args, **kwargs)

    # -- registration -----------------------------------------------------------------------------
    def register_parameter(self, name: str, param: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self, self._parameters)
        if isinstance(param, Module):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(Parameter, numpy array or None required)")
        self._parameters[name] = _plain(param, f"parameter '{name}'")

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self, self._buffers)
        if isinstance(tensor, Module):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(numpy array or None required)")
        self._buffers[name] = _plain(tensor, f"buffer '{name}'")
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        _check_name("module", name, self, self._modules)
        self._modules[name] = module

    register_module = add_module

    # -- attribute routing ------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _forget(self, name: str, *tables: str) -> None:
        self.__dict__.pop(name, None)
        for table in tables:
            self.__dict__[table].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "_buffers", "_modules")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if isinstance(value, Module):
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(Parameter, numpy array or None expected)")
            params[name] = _plain(value, f"parameter '{name}'")
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, "_parameters", "_buffers")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(Module or None expected)")
            modules[name] = None
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            buffers[name] = _plain(value, f"buffer '{name}'")
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del d["_parameters"][name]
        elif name in d.get("_buffers", ()):
            del d["_buffers"][name]
            d["_non_persistent_buffers_set"].discard(name)
        elif name in d.get("_modules", ()):
            del d["_modules"][name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> List[str]:
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    # -- iteration --------------------------------------------------------------------------------
    def _named_members(self, get_members: Callable[["Module"], Any], prefix: str = "",
                       recurse: bool = True, remove_duplicate: bool = True
                       ) -> Iterator[Tuple[str, Any]]:
        memo: Set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k), v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[Tuple[str, np.ndarray]]:
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[np.ndarray]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, np.ndarray]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[np.ndarray]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        memo: Set["Module"] = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: Optional[Set["Module"]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, "Module"]]:
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                            remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target: str) -> "Module":
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def _get_member(self, target: str, table: str, what: str) -> np.ndarray:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in getattr(mod, table):
            raise AttributeError("`" + name + "` is not " + what)
        return getattr(mod, name)

    def get_parameter(self, target: str) -> np.ndarray:
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target: str) -> np.ndarray:
        return self._get_member(target, "_buffers", "a buffer")

    # -- state ------------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf

    def state_dict(self, destination: Optional[Dict[str, Any]] = None, prefix: str = "",
                   keep_vars: bool = False) -> Dict[str, np.ndarray]:
        """Parameters then persistent buffers, then each child's, under dotted names: the live
        arrays (as PyTorch returns detached tensors sharing storage)."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict: Dict[str, Any], prefix: str, assign: bool,
                              missing_keys: List[str], unexpected_keys: List[str],
                              error_msgs: List[str]) -> None:
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            try:
                value = _to_array(state_dict[key], "state_dict value")
            except TypeError:
                error_msgs.append(f'While copying the parameter named "{key}", expected an array '
                                  f"from checkpoint but received {type(state_dict[key])}")
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] >= 1:
                value = value[0]  # PyTorch's compatibility rule for 1-element checkpoints
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            try:
                if assign:
                    setattr(self, name, value)
                else:
                    np.copyto(param, value.astype(param.dtype, copy=False))
            except Exception as ex:  # noqa: BLE001 - reported with the key, as PyTorch does
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.shape} and whose dimensions in the "
                                  f"checkpoint are {value.shape}, an exception occurred : "
                                  f"{ex.args}.")
        for key in state_dict:
            if not key.startswith(prefix):
                continue
            head = key[len(prefix):].split(".", 1)
            if len(head) > 1:
                if head[0] not in self._modules:
                    unexpected_keys.append(key)
            elif head[0] not in local_state:
                unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy ``state_dict``'s values into the module's arrays in place (converting dtype),
        or rebind them with ``assign=True``.  Missing and unexpected keys are errors when
        ``strict``, reported together; a shape mismatch is always an error."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: List[str] = []
        unexpected: List[str] = []
        errors: List[str] = []

        def load(module: Module, local: Dict[str, Any], prefix: str) -> None:
            module._load_from_state_dict(local, prefix, assign, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                         child_prefix)

        load(self, OrderedDict(state_dict), "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # -- modes and conversions --------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply_arrays(self, fn: Callable[[np.ndarray], np.ndarray],
                      memo: Dict[int, np.ndarray]) -> None:
        for module in self.modules():
            for table in (module._parameters, module._buffers):
                for k, v in table.items():
                    if v is None:
                        continue
                    if id(v) not in memo:
                        memo[id(v)] = fn(v)
                    table[k] = memo[id(v)]

    def to(self, *args: Any, dtype: Any = None, **kwargs: Any) -> "Module":
        """``to(dtype)`` converts floating-point parameters and buffers (complex ones only to a
        complex dtype), as PyTorch's does; a device argument must be the CPU."""
        for a in list(args) + [kwargs.pop("device", None)]:
            if isinstance(a, str) and a.split(":")[0] == "cpu" or a is None:
                continue
            if dtype is not None:
                raise TypeError(f"to() received an invalid combination of arguments: {args}")
            dtype = a
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        if dtype is None:
            return self
        target = np.dtype(dtype)
        if target.kind not in _FLOATING:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={target}")

        def convert(a: np.ndarray) -> np.ndarray:
            if a.dtype.kind == "f" or (a.dtype.kind == "c" and target.kind == "c"):
                return a.astype(target, copy=False)
            return a

        self._apply_arrays(convert, {})
        return self

    def _cast_floating(self, dtype: Any) -> "Module":
        def convert(a: np.ndarray) -> np.ndarray:
            return a.astype(dtype, copy=False) if a.dtype.kind == "f" else a

        self._apply_arrays(convert, {})
        return self

    def float(self) -> "Module":
        return self._cast_floating(np.float32)

    def double(self) -> "Module":
        return self._cast_floating(np.float64)

    def half(self) -> "Module":
        return self._cast_floating(np.float16)

    def cpu(self) -> "Module":
        return self

    # -- printing ---------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
