"""The corpus's PyTorch-printed graphs as benchmark workloads, named ``corpus:<case>``.

The corpus (``tests/corpus``, or the folder ``TORCHLIKE_BENCH_CORPUS`` / ``--corpus`` names, such
as ``../shared/corpus``) holds graphs printed by PyTorch 2.13 with example inputs.  A case becomes
a workload when its ``scripted.txt`` is straight-line elementwise work (``classify``): every node
an elementwise op of torchlike's registry, a constant, tuple/list packing or ``aten::chunk``; no
``prim::If``/``prim::Loop``, no reduction, matmul or module attribute; tensor inputs only, none
empty; and a program (the meta's Python source) no earlier case already has.  Excluded cases are
listed with the reason (``excluded()``; the report prints them).

torchlike runs the graph text itself: ``torchlike.ir.parse_graph`` + ``jit.ScriptFunction``.  The
oracle is the interpreter on the same graph (``jit.run``), which is also a mode; there is no numpy,
numexpr or Numba version.  PyTorch and JAX peers are written by hand per case (``PEERS``; a case
whose program a hand-written workload already is, e.g. ``gelu_tanh``, borrows that workload's);
the graph is never handed back to ``torch.jit``.

Inputs at benchmark sizes (``scaled_inputs``): the example inputs tiled, same dtype and values.
Per axis (aligned from the right) one factor multiplies every dimension above 1, so that
broadcasting (dimensions of 1), size ratios (``gates`` is 4x ``c`` for ``chunk(4, 1)``) and
relations between inputs (equal elements, non-zero divisors) are kept; the factors make the
per-axis largest extent hold about ``n`` elements (the first and last axes that are above 1
grow, as close to square as the factors allow).  ``noncontig_inputs`` is run on contiguous
copies (its example inputs were views; at benchmark sizes it is a plain elementwise program).
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from .workloads import Workload

ROOT = Path(__file__).resolve().parents[1]
ENV = "TORCHLIKE_BENCH_CORPUS"
_ALLOWED_KINDS = {"prim::Constant", "prim::TupleConstruct", "prim::ListUnpack",
                  "prim::ListConstruct", "prim::TupleUnpack", "aten::chunk"}


def corpus_dir() -> Path:
    return Path(os.environ.get(ENV) or ROOT / "tests" / "corpus")


# -- hand-written peers: (xp, *arrays) over torch or jax.numpy where the code is the same -----

def _broadcast_0d(xp, x, s, t):
    return x * s + t, (x + 2.5) * s - 3, s * t + 1.0


def _torch_multi_output_shared(torch, x, y, z):
    t = x * y + z
    b = torch.sigmoid(t) * x
    return torch.relu(t), b, t - b


def _jax_multi_output_shared(jax, x, y, z):
    t = x * y + z
    b = jax.nn.sigmoid(t) * x
    return jax.nn.relu(t), b, t - b


def _where_compare(xp, x, y):
    c1 = x > y
    c2 = x <= 2.0 * y
    a = xp.where(c1 & c2, x - y, y * 0.5)
    b = xp.where(x == y, xp.zeros_like(x), x / (x - y))
    c = xp.where(x >= 0.0, xp.where(y < 0.0, x, y), -x)
    return a, b, c, c1 | (x != y)


def _special(xp, x, y):
    return (x / 0.0, x / y, xp.log(x), xp.sqrt(x), xp.sqrt(xp.zeros_like(x) - 1.0),
            xp.exp(x) * 0.0)


def _torch_clamp_variants(torch, x, lo, hi):
    return (x.clamp(-0.5, 0.5), x.clamp_min(0.1), torch.clamp(x, max=0.2), torch.clamp(x, lo, hi),
            torch.clamp_max(x * 2.0, 1.0) + torch.relu(x))


def _jax_clamp_variants(jax, x, lo, hi):
    jnp = jax.numpy
    return (jnp.clip(x, -0.5, 0.5), jnp.maximum(x, 0.1), jnp.minimum(x, 0.2),
            jnp.minimum(jnp.maximum(x, lo), hi), jnp.minimum(x * 2.0, 1.0) + jax.nn.relu(x))


def _torch_int64_div(torch, a, b):
    return (a // b, a % b, torch.fmod(a, b), torch.div(a, b, rounding_mode="trunc"),
            torch.div(a, b, rounding_mode="floor"), torch.div(a, b), a // 3,
            torch.remainder(a, -3), a * 3 - b)


def _jax_int64_div(jax, a, b):
    jnp = jax.numpy
    f32 = jnp.float32        # torch's true division of ints gives the default float dtype
    return (a // b, a % b, jnp.fmod(a, b), jax.lax.div(a, b), a // b,
            a.astype(f32) / b.astype(f32), a // 3, jnp.remainder(a, -3), a * 3 - b)


def _promote(xp, a, b):
    s = a + b
    return s, a * 2 + 1, a / 2, a * 1.5, xp.exp(s * 0.1) - a


PEERS: Dict[str, Tuple[Optional[Callable], Optional[Callable]]] = {   # case -> (torch, jax)
    "addcmul": (lambda torch, a, b, c: (torch.addcmul(a, b, c, value=0.5),
                                        torch.addcdiv(a, b, c, value=2.0)),
                lambda jax, a, b, c: (a + 0.5 * b * c, a + 2.0 * b / c)),
    "broadcast_0d_scalar": (_broadcast_0d, lambda jax, *xs: _broadcast_0d(jax.numpy, *xs)),
    "broadcast_outer": (lambda torch, a, b, c: (torch.tanh(a * b + c), a - b),
                        lambda jax, a, b, c: (jax.numpy.tanh(a * b + c), a - b)),
    "clamp_variants": (_torch_clamp_variants, _jax_clamp_variants),
    "hardsigmoid": (lambda torch, x: torch.clamp(x / 6.0 + 0.5, min=0.0, max=1.0),
                    lambda jax, x: jax.numpy.clip(x / 6.0 + 0.5, 0.0, 1.0)),
    "leaky_relu": (lambda torch, x: torch.where(x > 0.0, x, x * 0.01),
                   lambda jax, x: jax.numpy.where(x > 0.0, x, x * 0.01)),
    "int64_floordiv_remainder": (_torch_int64_div, _jax_int64_div),
    "multi_output_shared": (_torch_multi_output_shared, _jax_multi_output_shared),
    "noncontig_inputs": (lambda torch, a, b, c: (a * b + torch.sin(c), (a - c).relu()),
                         lambda jax, a, b, c: (a * b + jax.numpy.sin(c), jax.nn.relu(a - c))),
    "promote_int32_float32": (_promote, lambda jax, a, b: _promote(jax.numpy, a, b)),
    "special_div_log_sqrt": (_special, lambda jax, x, y: _special(jax.numpy, x, y)),
    "where_compare": (_where_compare, lambda jax, x, y: _where_compare(jax.numpy, x, y)),
}


# -- selection ---------------------------------------------------------------------------------

def _walk(nodes):
    for node in nodes:
        yield node
        for block in node.blocks:
            yield from _walk(block.nodes)


def classify(case_dir: Path) -> Tuple[Optional[str], dict, str]:
    """(why the case is not a workload, or None; its meta; its scripted graph text)."""
    from torchlike import ir
    from torchlike.ops import registry
    meta = json.loads((case_dir / "meta.json").read_text())
    path = case_dir / "scripted.txt"
    if not path.exists():
        return "no scripted graph", meta, ""
    text = path.read_text()
    for inp in meta.get("inputs", []):
        if inp.get("kind") != "tensor":
            return f"input {inp.get('name')} is not a tensor ({inp.get('kind')})", meta, text
        if 0 in inp.get("shape", []):
            return f"input {inp['name']} is empty {inp['shape']}", meta, text
    try:
        graph = ir.parse_graph(text)
    except Exception as e:
        return f"graph does not parse: {type(e).__name__}: {e}"[:200], meta, text
    bad = set()
    for node in _walk(graph.nodes):
        if node.blocks:
            bad.add(f"{node.kind} (control flow)")
            continue
        if node.kind in _ALLOWED_KINDS:
            continue
        op = registry.lookup(node.kind)
        if op is None or not op.is_elementwise:
            bad.add(f"{node.kind} ({op.category if op else 'unknown'})")
    if bad:
        return "not straight-line elementwise: " + ", ".join(sorted(bad)), meta, text
    return None, meta, text


def _axis_factors(shapes: List[tuple], n: int) -> Dict[int, int]:
    """Factor per right-aligned axis (-1, -2, ...) for the tiled inputs (see the module doc)."""
    ndim = max((len(s) for s in shapes), default=0)
    extent = {a: max((s[a] for s in shapes if len(s) >= -a), default=1)
              for a in range(-ndim, 0)}
    grow = [a for a in range(-ndim, 0) if extent[a] > 1]
    factors = {a: 1 for a in extent}
    if not grow:
        return factors
    fixed = math.prod(extent[a] for a in extent)
    if len(grow) == 1:
        factors[grow[0]] = max(1, round(n / fixed))
        return factors
    first, last = grow[0], grow[-1]
    want_first = max(1, round(math.sqrt(n * extent[first] / fixed) / extent[first]))
    factors[first] = want_first
    factors[last] = max(1, round(n / (fixed * want_first)))
    return factors


def scaled_inputs(examples: Tuple[np.ndarray, ...], n: int) -> Tuple[np.ndarray, ...]:
    factors = _axis_factors([x.shape for x in examples], n)
    out = []
    for x in examples:
        reps = [factors[a] if x.shape[a] > 1 else 1 for a in range(-x.ndim, 0)]
        out.append(np.ascontiguousarray(np.tile(x, reps)) if x.ndim else x.copy())
    return tuple(out)


# -- workloads ---------------------------------------------------------------------------------

_CACHE: Dict[tuple, tuple] = {}


def _scan(directory: Path) -> Tuple[List[tuple], List[dict]]:
    """([(case, meta, text)], [{"case", "reason"}]) for the corpus in ``directory``."""
    key = (str(directory),)
    if key in _CACHE:
        return _CACHE[key]
    chosen, excluded, sources = [], [], {}
    cases = directory / "cases"
    for case_dir in sorted(cases.iterdir()) if cases.is_dir() else []:
        if not (case_dir / "meta.json").exists():
            continue
        why, meta, text = classify(case_dir)
        source = meta.get("source", "").strip()
        if why is None and source and source in sources:
            why = f"the same program as {sources[source]}"
        if why is not None:
            excluded.append({"case": case_dir.name, "reason": why})
            continue
        sources[source] = case_dir.name
        chosen.append((case_dir.name, meta, text))
    _CACHE[key] = (chosen, excluded)
    return chosen, excluded


def excluded() -> List[dict]:
    """The corpus cases that are not workloads, each with the reason."""
    return _scan(corpus_dir())[1]


def _make(case: str, meta: dict, text: str, hand_written: Dict[str, Workload]) -> Workload:
    from torchlike import ir, jit
    case_dir = corpus_dir() / "cases" / case
    with np.load(case_dir / "inputs.npz") as npz:
        examples = tuple(np.asarray(npz[i["name"]]) for i in meta["inputs"])
    oracle_graph = ir.parse_graph(text)

    def make_inputs(n, rng):
        return scaled_inputs(examples, n)

    def ref(xp, *xs):
        return jit.run(oracle_graph, *xs)
    twin = hand_written.get(case)
    torch_fn, jax_fn = PEERS.get(case, (twin.torch, twin.jax) if twin else (None, None))
    dtypes = sorted({i["dtype"] for i in meta["inputs"]}, key=lambda d: d != "float32")
    return Workload(f"corpus:{case}", None, make_inputs, ref, None, torch_fn, jax=jax_fn,
                    dtype="+".join(dtypes), capture="graph", corpus=case, graph_text=text,
                    ref_kind="interpreter", tags=("corpus",) + tuple(meta.get("exercises", ())))


def workloads(hand_written: List[Workload]) -> List[Workload]:
    """One workload per chosen corpus case (``[]`` where the corpus folder is missing)."""
    by_corpus = {w.corpus: w for w in hand_written if w.corpus and not w.gpu_only}
    return [_make(case, meta, text, by_corpus) for case, meta, text in _scan(corpus_dir())[0]]
