"""The subcommands: ``explain``, ``run`` and ``cache`` (argument parsing is in ``__init__``).

Each takes the parsed arguments, prints its report to stdout and returns the exit status;
bad input is raised as an error whose message is the one line the user sees.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from collections import Counter
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import jit
from ..backends import BACKENDS
from ..errors import TorchlikeError
from ..fuser import cache
from ..fuser.backend import get_backend_impl
from ..fuser.codegen import codegen_groups
from ..fuser.decisions import GROUPED, REFUSED, Decision, recording
from ..fuser.partition import fusion_groups
from ..ir import SUBGRAPH_ATTR, Graph, Node, ParseError, TensorType, parse_graph
from ..jit import ScriptFunction
from . import inputs as cli_inputs


class CommandError(TorchlikeError):
    """A user error the command line reports as one line."""


# -- shared: the graph and its inputs ------------------------------------------------------------

def read_graph(path: str) -> Tuple[Graph, str]:
    """The parsed graph at ``path`` (``-``: stdin) and a label for it."""
    label = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        raise CommandError(f"cannot read graph {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise CommandError(f"cannot read graph {path}: not UTF-8 text ({e.reason})") from None
    if not text.strip():
        raise CommandError(f"{label}: empty, expected a graph as PyTorch prints it "
                           "(print(torch.jit.script(f).graph))")
    try:
        return parse_graph(text), label
    except ParseError as e:
        raise CommandError(f"{label}:{e.line}:{e.column}: {e.reason}") from e


def _function_name(label: str) -> str:
    stem = os.path.splitext(os.path.basename(label))[0]
    return stem if stem.isidentifier() else "forward"


def gather_inputs(graph: Graph, args, required: bool) -> Optional[Tuple[list, list]]:
    """(bound inputs, argument values) from ``--input``/``--inputs``; None when nothing was
    given, ``required`` is false and the graph's types do not give every input."""
    specs = [cli_inputs.parse_spec(t) for t in args.input or []]
    arrays = cli_inputs.load_npz(args.inputs, "--inputs") if args.inputs else {}
    module = cli_inputs.load_npz(args.params, "--params") if args.params else None
    if not (specs or arrays or module is not None or required) and any(
            cli_inputs.spec_from_type(p) is None for p in graph.inputs):
        return None
    bound = cli_inputs.bind(graph, specs, arrays, args.inputs or "", module, args.params or "")
    return bound, cli_inputs.make_values(bound, args.seed)


def _origin(b: cli_inputs.Bound) -> str:
    if b.array is not None or b.module is not None:
        return f"({b.origin})"
    return f"{'random ' if b.spec.is_tensor else ''}({b.origin})"


def _declared_note(b: cli_inputs.Bound, value: Any) -> str:
    """``; the graph declares ...`` when a tensor's declared dtype or shape differs."""
    t = b.param.type
    if not (isinstance(t, TensorType) and hasattr(value, "shape")):
        return ""
    shape_differs = t.shape is not None and (len(t.shape) != value.ndim or any(
        d is not None and d != n for d, n in zip(t.shape, value.shape)))
    if (t.dtype is not None and t.dtype != str(value.dtype)) or shape_differs:
        dims = "" if t.shape is None else "[" + ", ".join(
            "*" if d is None else str(d) for d in t.shape) + "]"
        return f"; the graph was made for {t.dtype or 'Tensor'}{dims}"
    return ""


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _labelled(sections: List[Tuple[str, List[str]]]) -> List[str]:
    """``label  line`` rows, a section's further lines indented under its first."""
    width = max(len("fallbacks"), *(len(label) for label, _ in sections))  # steady columns
    return [f"{label if i == 0 else '':<{width}}  {line}".rstrip()
            for label, lines in sections for i, line in enumerate(lines)]


def _table(rows: List[Tuple[str, ...]], indent: str = "") -> List[str]:
    """Rows of columns, each column as wide as its widest cell."""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(map(len, rows)))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _input_lines(bound, values, seed) -> List[str]:
    rows = [(f"%{b.param.name}", cli_inputs.describe_value(v), _origin(b) + _declared_note(b, v))
            for b, v in zip(bound, values)]
    random = any(b.spec is not None and b.spec.is_tensor for b in bound)
    return _table(rows) + ([f"(random values from --seed {seed})"] if random else [])


# -- explain -------------------------------------------------------------------------------------

def group_names(graph: Graph) -> Dict[Node, str]:
    """Each fusion group node -> its printed name (``prim::FusionGroup_0``...), numbered in
    the order the printer numbers them."""
    names: Dict[Node, str] = {}

    def walk(block):
        for n in block.nodes:
            if SUBGRAPH_ATTR in n.attrs:
                names[n] = f"{n.kind}_{len(names)}"
            for b in n.blocks:
                walk(b)

    walk(graph.block)
    return names


def _op_counts(members) -> str:
    counts = Counter(m.kind for m in members)
    return ", ".join(k if n == 1 else f"{k} x{n}" for k, n in counts.items())


def decision_lines(found: List[Decision], names: Dict[Node, str]) -> List[str]:
    """The partitioner's decisions: groups formed (by name), then nodes left out and why."""
    lines = []
    order = {node: i for i, node in enumerate(names)}  # as printed
    grouped = sorted((d for d in found if d.action == GROUPED),
                     key=lambda d: order.get(d.node, len(order)))
    for d in grouped:
        outputs = ", ".join(f"%{v.name}" for v in d.node.outputs)
        lines.append(f"  {names.get(d.node, 'prim::FusionGroup')}: fused {plural(d.ops, 'op')} -> "
                     f"{outputs}")
        lines.append(f"      {_op_counts(d.members)}")
    for d in found:
        if d.action == REFUSED:
            lines.append(f"  not fused: {d.node.describe()}: {d.reason}")
        elif d.action != GROUPED:
            ops = ", ".join(m.describe() for m in d.members)
            lines.append(f"  not fused: {ops}: too small for a group ({d.reason})")
    return lines or ["  (no op the fuser could consider)"]


def _elide_prelude(source: str) -> str:
    """CUDA C without the shared ``tl_*`` prelude (a few hundred lines in every kernel)."""
    from ..cuda_backend.codegen import PRELUDE
    if PRELUDE not in source:
        return source
    lines = PRELUDE.count("\n")
    return source.replace(PRELUDE, f"// [the tl_* prelude, torchlike/cuda_backend/prelude.cuh: "
                                   f"{lines} lines; explain --full prints it]\n")


def explain(args) -> int:
    graph, label = read_graph(args.graph)
    given = gather_inputs(graph, args, required=False)
    with recording() as found:
        if given is None:
            fused = jit.fuse(graph)
        else:
            fused = ScriptFunction(graph, _function_name(label)).graph_for(*given[1])
    names = group_names(fused)
    out = [f"# {label}: {plural(len(graph.inputs), 'input')}, "
           f"{plural(len(names), 'fusion group')}"]
    if given is not None:
        out += ["", "inputs:"] + ["  " + line for line in _input_lines(*given, args.seed)]
    if not jit.fusion_enabled():
        out.append("# fusion is off (TORCHLIKE_FUSION=0): nothing is grouped")
    out += ["", "fused graph:", str(fused).rstrip("\n"), "", "fusion decisions:"]
    out += decision_lines(found, names)
    out += ["", f"kernels ({args.backend}):"]
    if given is None:
        out.append("  none generated: the code depends on dtypes and shapes, so give the inputs "
                   "(--input SPEC ... or --inputs FILE.npz)")
    elif not names:
        out.append("  none: the graph has no fusion group")
    else:
        generated = dict(codegen_groups(fused, *given[1], backend=args.backend))
        for node, name in names.items():
            source = generated.get(node)
            if source is None:
                out.append(f"--- {name}: did not run for these inputs (no kernel) ---")
            elif isinstance(source, str):
                out.append(f"--- {name}: no {args.backend} kernel ({source}): it runs in the "
                           "interpreter ---")
            else:
                text = source.source if args.full else _elide_prelude(source.source)
                out += [f"--- {name}: {source.name} ---", text.rstrip("\n")]
    print("\n".join(out))
    return 0


# -- run -----------------------------------------------------------------------------------------

def _to_device(values: List[Any], backend: str) -> Tuple[List[Any], Any]:
    """For backend cuda: the arrays as CuPy arrays, and a function that waits for the GPU."""
    if backend != "cuda":
        return values, lambda: None
    impl = get_backend_impl("cuda")
    ok, why = impl.available() if impl is not None else (False, "its module did not import")
    if not ok:
        raise CommandError(f"--backend cuda needs a CUDA GPU and CuPy: {why}")
    import cupy
    moved = [cupy.asarray(v) if isinstance(v, np.ndarray) else v for v in values]
    return moved, cupy.cuda.get_current_stream().synchronize


def _flatten(result) -> List[Any]:
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in _flatten(item)]
    return [result]


def _host(v: Any) -> Any:
    return v.get() if hasattr(v, "__cuda_array_interface__") else v


def format_seconds(s: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def _fusion_lines(s: Dict[str, Any], groups: int, backend: str) -> List[Tuple[str, List[str]]]:
    """How the fusion groups ran, from ``jit.stats()``."""
    if not groups:
        return [("fusion", ["no fusion group (torchlike explain says why)"])]
    if backend == "interpreter":
        return [("fusion", [f"{plural(groups, 'group')}, interpreted (--backend interpreter)"])]
    rows = [("fusion", [f"{plural(groups, 'group')}; kernels: {s['kernels_compiled']} "
                        f"compiled, {s['disk_hits']} loaded from the disk cache"])]
    falls = s["fallbacks"]
    if not falls:
        rows.append(("fallbacks", ["none: every group that ran used a compiled kernel"]))
    else:
        rows.append(("fallbacks", [f"{plural(sum(falls.values()), 'group')} ran in the "
                                   "interpreter:"] + [f"  {r}" + (f" (x{n})" if n > 1 else "")
                                                      for r, n in falls.items()]))
    return rows


def run(args) -> int:
    graph, label = read_graph(args.graph)
    if args.repeat < 1:
        raise CommandError(f"--repeat {args.repeat}: give at least 1 call to time")
    bound, values = gather_inputs(graph, args, required=True)
    previous = jit.get_backend()
    backend = args.backend or previous  # default: TORCHLIKE_FUSER_BACKEND's
    jit.set_backend(backend)
    try:
        values_on_device, sync = _to_device(values, backend)
        fn = ScriptFunction(graph, _function_name(label))
        jit.reset_stats()
        start = time.perf_counter()
        result = fn(*values_on_device)
        sync()
        first = time.perf_counter() - start
        stats = jit.stats()
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            fn(*values_on_device)
            sync()
            times.append(time.perf_counter() - start)
        groups = sum(1 for _ in fusion_groups(fn.graph_for(*values_on_device)))
    finally:
        jit.set_backend(previous)
    outputs = [_host(v) for v in _flatten(result)]
    sections = [
        ("graph", [f"{label} ({plural(len(graph.inputs), 'input')}, backend {backend})"]),
        ("inputs", _input_lines(bound, values, args.seed) or ["none"]),
        ("outputs", _table([(f"out{i}", cli_inputs.describe_value(v))
                            for i, v in enumerate(outputs)])),
        ("time", [f"{format_seconds(statistics.median(times))} per call (median of "
                  f"{plural(len(times), 'call')} after a warm-up call, which took "
                  f"{format_seconds(first)})"]),
    ] + _fusion_lines(stats, groups, backend)
    if args.output:
        sections.append(("saved", [f"{args.output} ({save_outputs(args.output, outputs)})"]))
    print("\n".join(_labelled(sections)))
    return 0


def save_outputs(path: str, outputs: List[Any]) -> str:
    """Write ``outputs`` as ``out0``, ``out1``, ... (Python scalars as 0-d arrays, None left
    out); returns the names written."""
    arrays = {f"out{i}": np.asarray(v) for i, v in enumerate(outputs) if v is not None}
    try:
        with open(path, "wb") as f:
            np.savez(f, **arrays)
    except OSError as e:
        raise CommandError(f"cannot write --output {path}: {e.strerror or e}") from None
    return ", ".join(arrays) or "no array output"


# -- cache ---------------------------------------------------------------------------------------

def format_bytes(n: float) -> str:
    if n < 1024:
        return f"{int(n)} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}"


def cache_command(args) -> int:
    where = jit.cache_dir()
    source = ("TORCHLIKE_CACHE_DIR" if os.environ.get("TORCHLIKE_CACHE_DIR")
              else "the default; TORCHLIKE_CACHE_DIR changes it")
    if args.action == "clear":
        removed = cache.clear_disk(BACKENDS)
        kernels = sum(k for k, _ in removed.values())
        size = sum(b for _, b in removed.values())
        print(f"removed {plural(kernels, 'kernel')} ({format_bytes(size)}) from {where}"
              + (f" ({', '.join(removed)})" if removed else ""))
        return 0
    usage = cache.disk_usage(BACKENDS)
    rows = [("location", f"{where} ({source})")]
    for backend, (kernels, size) in usage.items():
        rows.append((backend, f"{plural(kernels, 'kernel')}, {format_bytes(size)}"))
    rows.append(("total", f"{plural(sum(k for k, _ in usage.values()), 'kernel')}, "
                          f"{format_bytes(sum(b for _, b in usage.values()))}"))
    print("\n".join(_table(rows)))
    return 0
