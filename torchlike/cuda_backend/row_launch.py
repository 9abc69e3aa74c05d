"""Host side of a row-reduction kernel (``row_codegen``): which entry, how many threads.

``bind(source, spec, on_error, device)`` returns ``launcher(args) -> outputs`` for the exact
signature.  Per call it allocates the outputs, picks the entry -- a warp per row for rows of
up to ``WARP_MAX_N`` elements (``32 / team_width`` rows a warp for short rows), else a block
per row; the ``_vec`` twin when the row length is a multiple of the vector width and every
per-element array is aligned for it -- and calls ``device.launch_rows(entry, packed, team, R,
N, per_warp)``, which decides the launch shape: on a GPU ``gpu_shape`` below, in the emulator a
small one of its own (so rows wrap around the grid).
"""
from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple

from ..fuser.backend import GroupSpec, KernelSource, Unsupported
from ..fuser.kernel_spec import kernel_outputs, output_assembler, output_plan
from .launch import pack_kind, storage_dtype
from .layout import ITEMSIZE

WARP_MAX_N = 1024        # rows up to this long: a warp each (4 rows per 128-thread block)
WARP_BLOCK = 128
THREADS_PER_SM = 2048    # resident threads per SM on sm_80 / sm_90


def team_for(n: int) -> str:
    return "warp" if n <= WARP_MAX_N else "block"


def gpu_shape(team: str, rows: int, n: int, sm_count: int,
              per_warp: int = 1) -> Tuple[int, int]:
    """(grid, block) on a GPU: warps of 128-thread blocks (``per_warp`` rows a warp), or a
    block of 128..512 threads sized for ~8 elements per thread and pass (a power of two);
    never more blocks than fill every SM twice over (the rows are grid-strided)."""
    if team == "warp":
        block = WARP_BLOCK
        grid = math.ceil(rows / (block // 32 * per_warp))
    else:
        block = min(512, max(128, 1 << max(0, math.ceil(n / 8) - 1).bit_length()))
        grid = rows
    return max(1, min(grid, 2 * sm_count * (THREADS_PER_SM // block))), block


def bind(source: KernelSource, spec: GroupSpec, on_error: Callable, device,
         team: Optional[str] = None) -> Callable:
    info = source.info
    plan = spec.rows
    if plan is None or plan.key() != info.plan_key:  # the kernel key covers the plan
        raise Unsupported("compile failed: row kernel plan does not match its key")
    outs = kernel_outputs(spec)
    alloc = [(spec.values[v].shape, storage_dtype(spec.values[v].dtype)) for v in outs]
    arrays = [i for i, c in enumerate(plan.inputs) if c != "scalar"]
    is_array = [c != "scalar" for c in plan.inputs]  # the parameters follow the inputs' order
    R, N, V = plan.n_rows, plan.row_size, info.vector
    team = team or team_for(N)
    name = info.entries[0][:-len("_warp")]
    entry = f"{name}_{team}"
    vec_in = [(i, V * ITEMSIZE[spec.signature[i].dtype]) for i in arrays
              if plan.inputs[i] in ("full", "rowvec")]
    vec_out = [(j, V * ITEMSIZE[spec.values[v].dtype]) for j, v in enumerate(outs)
               if plan.out_levels[j] == 2]
    vec_ok = V > 1 and N % V == 0
    per_warp = 32 // info.team_width if team == "warp" else 1
    sizes = list(plan.shape) if "block" in plan.inputs else []  # row_codegen's S<d>
    params = info.params
    assemble = output_assembler(output_plan(spec, outs))
    pointer, empty = device.pointer, device.empty

    def launcher(args: Sequence[Any]) -> List[Any]:
        res = [empty(s, d) for s, d in alloc]
        if R:
            values = [pointer(a) if arr else a for a, arr in zip(args, is_array, strict=True)]
            optrs = [pointer(r) for r in res]
            e = entry
            if vec_ok and all(values[i] % a == 0 for i, a in vec_in) \
                    and all(optrs[j] % a == 0 for j, a in vec_out):
                e = entry + "_vec"
            values += optrs + [R, N] + sizes
            packed = [(pack_kind(t), v) for (t, _), v in zip(params, values, strict=True)]
            device.launch_rows(e, packed, team, R, N, per_warp)
        return res if assemble is None else assemble(res, args)
    return launcher
