"""Host side of a generated CUDA kernel: argument lists and per-signature launchers.

``bind(source, spec, on_error, device)`` precomputes everything the exact signature fixes (the
plan, output shapes and dtypes, sizes and strides) and returns ``launcher(args) -> outputs``.
Per call it only takes the data pointers (plus each chunk's offset), allocates the outputs (each
in the layout PyTorch gives it, ``fuser.output_layout``), picks the vector entry point when
every pointer is aligned for it (and, on the strided path, the sizes fit:
``Plan.vector_fits``), launches as many threads as the entry has elements or vectors to
do, and checks the integer-division flag.  ``device`` is what differs between a GPU and the
CPU emulator: ``empty(shape, dtype)``, ``pointer(array)``, ``launch(entry, values, n)``,
``zeros_err()``, ``read_err(err)``, ``table(int64 numpy array) -> (keep_alive, pointer)``.

float16 arrays are handed to the kernel as they are; bfloat16 arrays (which numpy and cupy do
not have) travel as uint16 bit patterns, and bfloat16 outputs come back as uint16 arrays.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, List, Sequence

import numpy as np

from ..fuser.backend import GroupSpec, KernelSource, Unsupported
from ..fuser.kernel_spec import output_assembler, output_plan
from ..fuser.output_layout import allocation
from .codegen import CudaKernelInfo
from .layout import ITEMSIZE
from .layout import plan as make_plan

# C parameter type -> how a Python value is packed (struct format)
PACK = {"unsigned int": "I", "unsigned long long": "Q", "int": "i", "long long": "q",
        "int64": "q", "float64": "d", "bool_": "?"}


def storage_dtype(dtype: str) -> np.dtype:
    return np.dtype("uint16" if dtype == "bfloat16" else dtype)


def pack_kind(ctype: str) -> str:
    return "Q" if ctype.endswith("*") else PACK[ctype]


def table_of(params, values) -> np.ndarray:
    """All kernel arguments as one int64 array (doubles as their bits, bools as 0/1)."""
    out = np.empty(len(values), np.int64)
    for k, ((ctype, _), v) in enumerate(zip(params, values, strict=True)):
        kind = pack_kind(ctype)
        if kind == "d":
            out[k] = struct.unpack("<q", struct.pack("<d", float(v)))[0]
        elif kind == "Q":
            out[k] = np.uint64(v).view(np.int64) if isinstance(v, np.generic) else \
                struct.unpack("<q", struct.pack("<Q", int(v)))[0]
        else:
            out[k] = int(v)
    return out


def bind(source: KernelSource, spec: GroupSpec, on_error: Callable, device) -> Callable:
    info: CudaKernelInfo = source.info
    p = make_plan(spec, info.max_param_bytes)
    if p.key() != info.plan_key:  # the kernel key covers the plan; never expected
        raise Unsupported("compile failed: kernel plan does not match its key")
    params, entries, V = info.params, info.entries, info.vector
    # each output dense in its order (PyTorch's layout): allocated in memory order, then
    # viewed in its shape
    alloc = [allocation(v.shape, v.order) + (storage_dtype(v.dtype),) for v in p.writes]
    # the vector entry: every pointer moved by whole vectors aligned to one (a view read once
    # per vector, ``inner == "zero"``, only to its element), and the strided plan's sizes fit
    reads = [(v.input, v.offset * ITEMSIZE[v.dtype],
              ITEMSIZE[v.dtype] * (1 if v.inner == "zero" else V)) for v in p.reads]
    out_align = [ITEMSIZE[v.dtype] * (1 if v.inner == "zero" else V) for v in p.writes]
    vector = entries[1] if len(entries) > 1 and p.vector_fits() else None
    n_vec = max(1, p.n // V) if V else 0   # threads the vector entry needs
    index_args = p.index_args()
    scalars = p.scalars
    n = p.n
    assemble = output_assembler(output_plan(spec, [v.value for v in p.writes]))
    uses_err, table = info.uses_err, info.table
    pointer, empty = device.pointer, device.empty

    def launcher(args: Sequence[Any]) -> List[Any]:
        res = [empty(s, d) if axes is None else empty(s, d).transpose(axes)
               for s, axes, d in alloc]
        if n:
            ptrs = [pointer(args[i]) + off for i, off, _ in reads]
            optrs = [pointer(r) for r in res]
            entry, threads = entries[0], n
            if vector is not None \
                    and all(q % a == 0 for q, (_, _, a) in zip(ptrs, reads, strict=True)) \
                    and all(q % a == 0 for q, a in zip(optrs, out_align, strict=True)):
                entry, threads = vector, n_vec
            values = ptrs + [args[i] for i in scalars] + optrs + index_args
            err = device.zeros_err() if uses_err else None
            if table:
                keep, tptr = device.table(table_of(params, values))
                device.launch(entry, [("Q", tptr)] + ([("Q", device.pointer(err))] if uses_err
                                                     else []), threads, keep)
            else:
                packed = [(pack_kind(t), v) for (t, _), v in zip(params, values, strict=True)]
                if uses_err:
                    packed.append(("Q", device.pointer(err)))
                device.launch(entry, packed, threads, None)
            if uses_err and device.read_err(err):
                on_error(args)
        return res if assemble is None else assemble(res, args)
    return launcher
