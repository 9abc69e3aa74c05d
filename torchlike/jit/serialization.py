"""Saving and loading ``ScriptFunction``s: a small, versioned zip format that needs no pickle.

A saved file is a zip archive holding three members:

``meta.json``
    ``{"format": "torchlike.ScriptFunction", "version": 1, "name": "forward",
    "input_names": ["x", "y"], "kind": "trace"}``.  ``kind`` is ``"trace"`` or ``"script"`` (how
    the graph was captured; ``"graph"`` for a function built from a hand-made graph).  A reader
    refuses a different ``format`` and any ``version`` it does not know (a newer file says so).
``graph.txt``
    ``str(graph)``: the graph in PyTorch's text form, read back with
    ``torchlike.ir.parse_graph``.
``constants.npz``
    The exact values of tensor constants, which the text form cannot carry (it prints a 0-d
    tensor constant as ``{2.5}`` with 6 significant digits and a larger one as ``<Tensor>``).
    Key ``c<i>`` holds the value of the i-th ``prim::Constant`` in graph order: a pre-order walk
    of each block's nodes, descending into a node's blocks and then its fusion subgraph right
    after the node.  Written with ``np.savez`` and read with ``allow_pickle=False``.

Example::

    fn.save("f.tlk")
    fn2 = torchlike.jit.load("f.tlk")      # same graph text, same results
"""
from __future__ import annotations

import io
import json
import zipfile
from typing import Any, Dict, Iterator, List

import numpy as np

from ..errors import TorchlikeError
from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Block, Graph, Node
from ..ir.parser import parse_graph

FORMAT = "torchlike.ScriptFunction"
VERSION = 1
KINDS = ("trace", "script", "graph")


class SerializationError(TorchlikeError, ValueError):
    """A file that is not a saved ScriptFunction, is damaged, or comes from a newer torchlike."""


def constant_nodes(graph: Graph) -> Iterator[Node]:
    """``prim::Constant`` nodes in the order ``constants.npz`` numbers them."""
    def walk(block: Block):
        for node in block.nodes:
            if node.kind == "prim::Constant":
                yield node
            for b in node.blocks:
                yield from walk(b)
            sub = node.attrs.get(SUBGRAPH_ATTR)
            if isinstance(sub, Graph):
                yield from walk(sub.block)
    return walk(graph.block)


def save_function(path, graph: Graph, name: str, input_names: List[str], kind: str) -> None:
    """Write ``graph`` and its metadata to ``path`` (a filename or a binary file object)."""
    meta = {"format": FORMAT, "version": VERSION, "name": name,
            "input_names": list(input_names), "kind": kind}
    arrays: Dict[str, np.ndarray] = {}
    for i, node in enumerate(constant_nodes(graph)):
        value = node.attrs.get("value")
        if isinstance(value, np.ndarray):
            arrays[f"c{i}"] = value
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("meta.json", json.dumps(meta, indent=1))
        z.writestr("graph.txt", str(graph))
        z.writestr("constants.npz", buf.getvalue())


def load_function(path) -> Dict[str, Any]:
    """Read a file written by ``save_function``: a dict with ``graph``, ``name``,
    ``input_names`` and ``kind``.  Raises ``SerializationError`` for anything else."""
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            missing = {"meta.json", "graph.txt", "constants.npz"} - names
            if missing:
                raise SerializationError(f"{path}: not a saved torchlike function (missing "
                                         f"{', '.join(sorted(missing))})")
            meta = json.loads(z.read("meta.json").decode("utf-8"))
            _check_meta(meta, path)
            text = z.read("graph.txt").decode("utf-8")
            npz = np.load(io.BytesIO(z.read("constants.npz")), allow_pickle=False)
            arrays = {k: npz[k] for k in npz.files}
    except zipfile.BadZipFile as e:
        raise SerializationError(f"{path}: not a saved torchlike function ({e})") from e
    graph = parse_graph(text)
    consts = list(constant_nodes(graph))
    for key, value in arrays.items():
        i = int(key[1:])
        if i >= len(consts):
            raise SerializationError(f"{path}: constants.npz has {key} but the graph has only "
                                     f"{len(consts)} constants")
        consts[i].attrs["value"] = value
    return {"graph": graph, "name": meta["name"], "input_names": list(meta["input_names"]),
            "kind": meta["kind"]}


def _check_meta(meta: Any, path) -> None:
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise SerializationError(f"{path}: meta.json does not describe a {FORMAT} "
                                 f"(format={meta.get('format') if isinstance(meta, dict) else meta!r})")
    version = meta.get("version")
    if not isinstance(version, int) or version < 1:
        raise SerializationError(f"{path}: bad format version {version!r}")
    if version > VERSION:
        raise SerializationError(f"{path}: saved in format version {version}, newer than this "
                                 f"torchlike reads (version {VERSION}); upgrade torchlike")
    for field in ("name", "input_names", "kind"):
        if field not in meta:
            raise SerializationError(f"{path}: meta.json lacks '{field}'")
    if meta["kind"] not in KINDS:
        raise SerializationError(f"{path}: unknown kind {meta['kind']!r} (expected one of "
                                 f"{', '.join(KINDS)})")
