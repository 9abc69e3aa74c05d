"""Compile a generated kernel module with Numba and wrap it in per-signature launchers.

``compile_kernel(source)`` writes the module to the disk cache (if it is not already there,
byte for byte), executes it as a module named after its file, and compiles the kernel eagerly
for its exact Numba argument types -- Numba loads the machine code from its own cache next to
the file when it can (counted as ``disk_hits``), else compiles (``kernels_compiled``).  If a
cached artifact is unreadable, the kernel's Numba cache files are deleted and it is compiled
once more before the failure becomes a fallback.
"""
from __future__ import annotations

import glob
import os
import sys
import types
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from ..fuser.backend import ArraySpec, GroupSpec, KernelSource, Unsupported
from ..fuser.cache import ensure_source, kernel_dir
from ..fuser.kernel_spec import (
    OutputKind,
    OutputSource,
    kernel_outputs,
    output_assembler,
    output_plan,
)
from ..fuser.output_layout import allocation, output_orders
from ..fuser.stats import bump
from .codegen import NumbaArg, NumbaKernelInfo, ScalarArg

_empty = np.empty
_uint16 = np.dtype("uint16")


def _numba_types(arg_types: Sequence[NumbaArg], uses_err: bool):
    import numba
    from numba.core import types as nt
    scalars = {"bool": nt.boolean, "int64": nt.int64, "float64": nt.float64}
    out = []
    for t in arg_types:
        if isinstance(t, ScalarArg):
            out.append(scalars[t.dtype])
        else:
            out.append(nt.Array(numba.from_dtype(np.dtype(t.dtype)), t.rank, t.layout,
                                readonly=t.readonly))
    if uses_err:
        out.append(nt.Array(nt.int32, 1, "C"))
    return tuple(out)


def _load(path: str, modname: str, text: str):
    module = types.ModuleType(modname)
    module.__file__ = path
    sys.modules[modname] = module
    exec(compile(text, path, "exec"), module.__dict__)
    return module


def _drop_numba_cache(path: str, modname: str) -> None:
    pattern = os.path.join(os.path.dirname(path), "__pycache__", f"*{modname}*")
    for f in glob.glob(pattern) + glob.glob(os.path.join(os.path.dirname(path), "__pycache__",
                                                         f"{os.path.basename(path)[:-3]}*")):
        try:
            os.unlink(f)
        except OSError:
            pass


class CpuKernel:
    """A compiled Numba kernel (``dispatcher``) and how to call it."""

    def __init__(self, source: KernelSource, dispatcher, from_disk: bool):
        self.source = source
        self.dispatcher = dispatcher
        self.from_disk = from_disk

    def bind(self, spec: GroupSpec, on_error: Callable[[Sequence[Any]], None]):
        """``launcher(args) -> outputs`` for ``spec``'s exact signature: output shapes and
        dtypes precomputed; fresh outputs every call, each laid out as PyTorch would
        (``output_layout``: C unless the inputs are laid out otherwise).  ``on_error(args)``
        runs when the kernel flags an integer division by zero (it raises)."""
        fn = self.dispatcher
        outs = kernel_outputs(spec)
        orders = [tuple(range(len(spec.values[v].shape))) for v in outs] if spec.reductions \
            else output_orders(spec)
        alloc = []  # (shape in memory order, dtype, axes viewing it in its shape, or None)
        for v, order in zip(outs, orders, strict=True):
            mem_shape, axes = allocation(spec.values[v].shape, order)
            alloc.append((mem_shape, np.dtype(spec.values[v].dtype), axes))
        plan = output_plan(spec, outs)
        assemble = output_assembler(plan)
        f16_in = [i for i, s in enumerate(spec.signature)
                  if isinstance(s, ArraySpec) and s.dtype == "float16"]
        f16_out = {j for j, (_, dt, _) in enumerate(alloc) if dt == np.float16}
        uses_err = self.source.info.uses_err
        if spec.concats:
            allocate, assemble = _concat_outputs(spec, outs, alloc, plan)
            return self._launcher(allocate, assemble, f16_in, f16_out, uses_err, on_error,
                                  len(outs))
        if any(axes is not None for _, _, axes in alloc):
            # some output is not C-ordered: allocated in memory order and viewed (transpose)
            # in its logical shape
            def allocate():
                return [_empty(s, d) if axes is None else _empty(s, d).transpose(axes)
                        for s, d, axes in alloc]
            return self._launcher(allocate, assemble, f16_in, f16_out, uses_err, on_error)
        alloc = [(s, d) for s, d, _ in alloc]
        if assemble is None and not f16_in and not f16_out and not uses_err:
            if len(alloc) == 1:
                shape, dtype = alloc[0]

                def launch(args):
                    out = _empty(shape, dtype)
                    fn(*args, out)
                    return [out]
                return launch

            def launch(args):
                res = [_empty(s, d) for s, d in alloc]
                fn(*args, *res)
                return res
            return launch
        return self._launcher(lambda: [_empty(s, d) for s, d in alloc], assemble, f16_in,
                              f16_out, uses_err, on_error)

    def _launcher(self, allocate, assemble, f16_in, f16_out, uses_err, on_error,
                  n_out: Optional[int] = None):
        """The general launcher: float16 arrays as uint16 bits, the division-by-zero flag,
        outputs assembled from kernel outputs (``output_assembler``); ``allocate()`` makes the
        fresh outputs: the kernel's, then (``n_out`` of them first) other arrays
        ``assemble`` may return."""
        fn = self.dispatcher

        def launch(args):
            res = allocate()
            kargs = list(args)
            for i in f16_in:
                kargs[i] = kargs[i].view(_uint16)
            kouts = [r.view(_uint16) if j in f16_out else r for j, r in enumerate(res[:n_out])]
            if uses_err:
                err = np.zeros(1, np.int32)
                fn(*kargs, *kouts, err)
                if err[0]:
                    on_error(args)
            else:
                fn(*kargs, *kouts)
            return res if assemble is None else assemble(res, args)
        return launch


def _concat_outputs(spec: GroupSpec, outs: Sequence[Any], alloc: Sequence[Tuple],
                    plan: Sequence[OutputSource]):
    """(allocate, assemble) for a group with ``prim::FusedConcat`` outputs: each concatenation
    allocated C-ordered and passed as each of its pieces' kernel outputs (the kernel writes a
    piece at its offset: ``codegen._Renderer.write_at``), the concatenation returned; other
    outputs as ``bind`` allocates them."""
    slot = {v: j for j, v in enumerate(outs)}
    cats = []  # (shape, dtype, the kernel output slots of its pieces)
    plan = list(plan)  # each CONCAT becomes the whole array allocate() appends
    for k, src in enumerate(plan):
        if src.kind is OutputKind.CONCAT:
            v = spec.outputs[k]
            c, shape = spec.concats[v], spec.values[v].shape
            plan[k] = OutputSource(OutputKind.KERNEL_OUTPUT, len(outs) + len(cats))
            cats.append((shape, np.dtype(spec.values[v].dtype), [slot[p] for p in c.pieces]))
    in_cat = {j for _, _, js in cats for j in js}
    own = [(j, s, d, axes) for j, (s, d, axes) in enumerate(alloc) if j not in in_cat]

    def allocate():
        res = [None] * len(outs)
        for j, s, d, axes in own:
            res[j] = _empty(s, d) if axes is None else _empty(s, d).transpose(axes)
        for shape, dtype, js in cats:
            whole = _empty(shape, dtype)
            for j in js:
                res[j] = whole
            res.append(whole)
        return res
    return allocate, output_assembler(plan)


def compile_kernel(source: KernelSource) -> CpuKernel:
    """Write/reuse the module on disk, load it and compile the kernel for its argument types."""
    info: NumbaKernelInfo = source.info
    key_hash = info.hash
    path = os.path.join(kernel_dir("cpu"), f"{key_hash}.py")
    modname = f"torchlike_kernel_{key_hash}"
    sig = _numba_types(info.arg_types, info.uses_err)
    last: Optional[BaseException] = None
    for _attempt in range(2):
        try:
            ensure_source(path, source.source)
            module = _load(path, modname, source.source)
            dispatcher = getattr(module, source.name)
            dispatcher.compile(sig)
        except Exception as e:  # a broken cache artifact, or the compiler refused the code
            last = e
            _drop_numba_cache(path, modname)
            continue
        hits = sum(dispatcher.stats.cache_hits.values())
        bump("disk_hits" if hits else "kernels_compiled")
        return CpuKernel(source, dispatcher, bool(hits))
    first = str(last).strip().splitlines()[0] if str(last).strip() else ""
    raise Unsupported(f"compile failed: {type(last).__name__}: {first[:200]}")
