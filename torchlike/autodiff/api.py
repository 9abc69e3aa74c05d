"""``vjp``, ``grad`` and ``vjp_graphs``: derivatives of traced and scripted programs.

    outs, pullback = vjp(f, x, w)           # f: a function (traced), ScriptFunction, ScriptModule
    gx, gw = pullback(ones_like(outs))      # one cotangent per output; one gradient per primal
    df = grad(loss, argnums=(0, 1))         # scalar-valued functions
    fwd, bwd = vjp_graphs(f, x, w)          # the two graphs, as they are before fusion

The program is captured and specialized for the primals' types (inlined, typed, constants
propagated, CSE, DCE), differentiated (``engine.py``), and the forward and backward graphs are
then run as ``ScriptFunction``s: each goes through the usual passes and the fuser, so
``forward_fn.graph_for(*primals)`` and ``backward_fn.graph_for(*cotangents, *saved)`` show
their fusion groups.  For a ``ScriptModule`` the parameters are inputs too: the forward graph
takes ``(*primals, *parameters)`` and the gradients of the parameters come back as a dict by
name (``{"linear.weight": ...}``) after the primals' gradients.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..frontend.tracer import trace_graph
from ..fuser import config
from ..ir.graph import Graph, Value, clone_graph
from ..ir.types import ClassType, TensorType, type_of_python_value
from ..jit.module_graphs import attribute_path, bind_attributes, inline_methods
from ..jit.script_function import ScriptFunction, signature_of
from ..nn.module import Module
from ..passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    infer_types,
    inline_functions,
    propagate_constants,
    simplify_tuples,
)
from ..passes.remove_mutation import remove_mutation
from ..passes.shape_queries import fold_input_shape_queries
from ..passes.utils import replace_all_uses
from .engine import AutodiffError, differentiable, differentiate


@dataclass
class Compiled:
    """A program differentiated for one signature of primals."""

    forward: ScriptFunction     # (*primals[, *parameters]) -> (*outputs, *saved)
    backward: ScriptFunction    # (*cotangents, *saved) -> one gradient per input
    num_outputs: int
    cotangent_outputs: List[int]  # which outputs take a cotangent (the differentiable ones)
    output_spec: Any              # how the flat outputs nest: an index, or a list of specs
                                  # (a tuple result: ``(out, (h, c))`` is [0, [1, 2]])
    param_names: List[str]        # a module's parameters (extra inputs, last)
    params: List[Any]


def _forward_graph(module, primals) -> Graph:
    """A copy of ``module``'s forward graph; for a forward PyTorch saved overloaded (a scripted
    nn.LSTM: ``forward__0``, ``forward__1``), the overload the primals fit, with the defaults
    they leave out (``hx=None``) as constants."""
    overloads = module.forward_overloads() if hasattr(module, "forward_overloads") else []
    if "forward" in getattr(module, "_methods", {}) or not overloads:
        return clone_graph(module.graph)
    fn, full = module.pick_overload(tuple(primals))
    g = clone_graph(fn.graph)
    for v, a in list(zip(g.inputs[1 + len(primals):], full[len(primals):])):
        const = g.insert_constant(a, type_of_python_value(a), block=g.block, index=0)
        replace_all_uses(v, const, g)
        g.block.params.remove(v)
    return g


def _module_graph(module, primals) -> Tuple[Graph, List[str], List[Any]]:
    """A ScriptModule's forward with its parameters as extra inputs (after the primals) and
    every other attribute a constant; ``%self`` removed."""
    g = _forward_graph(module, primals)
    inline_methods(g, module)
    bind_attributes(g, module)
    named = dict(module.named_parameters())
    root = g.inputs[0]
    by_name: Dict[str, Value] = {}
    for node in list(g.all_nodes()):
        if node.kind != "prim::GetAttr" or not isinstance(node.outputs[0].type, TensorType):
            continue
        path = attribute_path(node.outputs[0], root)
        if path is None:
            continue
        name = ".".join(path)
        out = node.outputs[0]
        if name in named:
            if name not in by_name:
                by_name[name] = g.add_input(name.replace(".", "_"), out.type)
            replace_all_uses(out, by_name[name], g)
        else:
            value = module
            for p in path:
                value = getattr(value, p)
            const = g.create("prim::Constant", [], [out.type], {"value": value},
                             block=node.owning_block,
                             index=node.owning_block.nodes.index(node)).output()
            replace_all_uses(out, const, g)
        node.owning_block.remove(node)
    eliminate_dead_code(g)
    for node in [n for n in g.all_nodes() if n.kind == "prim::GetAttr"]:
        if not node.outputs[0].uses:
            node.owning_block.remove(node)
    if root.uses:
        raise AutodiffError(f"{type(module).__name__}: %self is still used after its "
                            f"parameters became inputs ({root.uses[0].describe()})")
    g.block.params.remove(root)
    names = list(by_name)
    return g, names, [named[n] for n in names]


def capture(fn: Any, primals: Sequence[Any]) -> Tuple[Graph, List[str], List[Any]]:
    """``fn``'s graph (a copy), the names of parameters added as inputs, and their arrays."""
    if hasattr(fn, "method_graph") and hasattr(fn, "forward_overloads"):
        return _module_graph(fn, primals)
    if isinstance(fn, Module):
        raise AutodiffError(f"{type(fn).__name__} is an nn.Module: compile it first with "
                            f"jit.script(module) or jit.trace(module, inputs)")
    if isinstance(fn, ScriptFunction):
        g = clone_graph(fn.graph)
        if g.inputs and isinstance(g.inputs[0].type, ClassType):
            raise AutodiffError("a method graph taking %self: pass the ScriptModule itself")
        return g, [], []
    if callable(fn):
        return trace_graph(fn, tuple(primals)), [], []
    raise AutodiffError(f"cannot differentiate a {type(fn).__name__}: pass a function, a "
                        f"ScriptFunction or a ScriptModule")


def prepare(fn: Any, primals: Sequence[Any]) -> Tuple[Graph, List[str], List[Any], bool]:
    """The typed, optimized (unfused) graph of ``fn`` for ``primals``; a tuple result is
    flattened into the graph's outputs (the flag says it was a tuple)."""
    g, names, params = capture(fn, primals)
    g = inline_functions(g)
    args = list(primals) + list(params)
    if len(args) != len(g.inputs):
        raise TypeError(f"the program takes {len(g.inputs)} inputs, got {len(args)}")
    infer_types(g, [type_of_python_value(a) for a in args])
    if fold_input_shape_queries(g):  # a scripted nn.LSTM's input.dim() == 3 & co.
        infer_types(g, [type_of_python_value(a) for a in args])
    # remove_mutation: a PyTorch-traced cell's ``aten::add_`` on a fresh tensor is ``add``,
    # which has a derivative rule (a write into an input or an alias stays, and is refused)
    for run_pass in (simplify_tuples, propagate_constants, remove_mutation,
                     eliminate_common_subexpressions, eliminate_dead_code):
        run_pass(g)
    # types again: arguments folded to constants above (a module's num_layers, batch_first)
    # give ops like aten::lstm their output shapes, which the rules after them need
    infer_types(g, [type_of_python_value(a) for a in args])
    leaves: List[Value] = []
    spec = _flatten(g.outputs[0], leaves) if len(g.outputs) == 1 else \
        [_flatten(v, leaves) for v in g.outputs]
    if leaves != list(g.outputs):
        g.set_outputs(leaves)
        eliminate_dead_code(g)
    return g, names, params, spec


def _flatten(v: Value, leaves: List[Value]) -> Any:
    """A result made by ``prim::TupleConstruct`` (nested: a traced nn.LSTM's
    ``(out, (h, c))``) as its leaves, appended to ``leaves``; returns where they went."""
    if v.node is not None and v.node.kind == "prim::TupleConstruct":
        return [_flatten(e, leaves) for e in v.node.inputs]
    leaves.append(v)
    return len(leaves) - 1


def _nest(spec: Any, flat: Sequence[Any]) -> Any:
    return flat[spec] if isinstance(spec, int) else tuple(_nest(s, flat) for s in spec)


def _unnest(spec: Any, value: Any, out: List[Any]) -> None:
    """The cotangents given in the outputs' nesting, flattened into ``out`` (in leaf order)."""
    if isinstance(spec, int):
        out.append(value)
        return
    if value is None:   # no cotangent for a whole tuple: none for each of its leaves
        value = (None,) * len(spec)
    if not isinstance(value, (tuple, list)) or len(value) != len(spec):
        got = f"{len(value)}" if isinstance(value, (tuple, list)) else type(value).__name__
        raise AutodiffError(f"pullback takes {len(spec)} cotangents (one per output, nested "
                            f"like the outputs), got {got}")
    for s, v in zip(spec, value):
        _unnest(s, v, out)


def compile_vjp(fn: Any, *primals: Any, wrt: Optional[Sequence[int]] = None) -> Compiled:
    """Differentiate ``fn`` for ``primals`` with respect to the inputs ``wrt`` (default: all
    primals, and a module's parameters)."""
    g, names, params, spec = prepare(fn, primals)
    n_out = len(g.outputs)
    idx = list(range(len(g.inputs))) if wrt is None else list(wrt) + list(
        range(len(primals), len(g.inputs)))
    fwd, bwd, info = differentiate(g, idx)
    return Compiled(ScriptFunction(fwd, name="forward"), ScriptFunction(bwd, name="backward"),
                    n_out, info["cotangents"], spec, names, params)


# ScriptFunction -> {(signature, wrt, settings generation): Compiled}.  Only graphs are cached:
# a traced Python function is traced again on each call (its Python control flow may differ),
# and a module's buffers and scalar attributes are baked into its graph as constants.
_COMPILED: "weakref.WeakKeyDictionary[ScriptFunction, Dict[Any, Compiled]]" = \
    weakref.WeakKeyDictionary()


def cached_compile(fn: Any, primals: Sequence[Any],
                   wrt: Optional[Sequence[int]] = None) -> Compiled:
    """``compile_vjp``, remembered per ScriptFunction and signature of the primals."""
    if not isinstance(fn, ScriptFunction):
        return compile_vjp(fn, *primals, wrt=wrt)
    key = (signature_of(tuple(primals)), None if wrt is None else tuple(wrt),
           config.generation)
    per_fn = _COMPILED.setdefault(fn, {})
    c = per_fn.get(key)
    if c is None:
        c = per_fn[key] = compile_vjp(fn, *primals, wrt=wrt)
    return c


def vjp_graphs(fn: Any, *primals: Any) -> Tuple[Graph, Graph]:
    """``(forward_graph, backward_graph)`` of ``fn`` at ``primals``: the forward returns the
    outputs then the saved values, the backward takes the differentiable outputs' cotangents
    then the saved values and returns a gradient per input (None for non-float inputs)."""
    c = compile_vjp(fn, *primals)
    return c.forward.graph, c.backward.graph


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def vjp(fn: Any, *primals: Any) -> Tuple[Any, Callable]:
    """``(outputs, pullback)``: ``fn(*primals)`` and a function from cotangents (one per
    output, shaped like it; None for an integer or bool output) to a tuple of gradients, one
    per primal (None for integer, bool and scalar primals), plus a dict of parameter
    gradients by name when ``fn`` is a ScriptModule."""
    c = cached_compile(fn, primals)
    return run_vjp(c, primals)


def run_vjp(c: Compiled, primals: Sequence[Any]) -> Tuple[Any, Callable]:
    res = _as_tuple(c.forward(*primals, *c.params))
    outs, saved = res[:c.num_outputs], res[c.num_outputs:]
    shown = _nest(c.output_spec, outs)

    def pullback(cotangents: Any) -> Tuple[Any, ...]:
        cots: List[Any] = []
        _unnest(c.output_spec, cotangents, cots)
        given = []
        for i in c.cotangent_outputs:
            ct = cots[i]
            out = np.asarray(outs[i])
            if ct is None:
                ct = np.zeros_like(out)
            ct = np.asarray(ct, dtype=out.dtype)
            if ct.shape != out.shape:
                raise AutodiffError(f"cotangent {i} has shape {ct.shape}, output {i} has "
                                    f"shape {out.shape}")
            given.append(ct)
        grads = _as_tuple(c.backward(*given, *saved))
        n = len(grads) - len(c.param_names)
        head = tuple(grads[:n])
        if c.param_names:
            return head + (dict(zip(c.param_names, grads[n:])),)
        return head

    return shown, pullback


def grad(fn: Any, argnums: Union[int, Sequence[int]] = 0) -> Callable:
    """The gradient of a scalar-valued ``fn`` with respect to the primals ``argnums`` (an int:
    one array; a tuple: a tuple); a module's parameter gradients come last as a dict."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def grad_fn(*primals: Any):
        for i in nums:
            if not -len(primals) <= i < len(primals):
                raise AutodiffError(f"argnums {i} is out of range for {len(primals)} arguments")
        idx = [i % len(primals) for i in nums]
        c = cached_compile(fn, primals, wrt=idx)
        out, pullback = run_vjp(c, primals)
        if not isinstance(c.output_spec, int):
            raise AutodiffError(f"grad needs a function returning one scalar, got "
                                f"{c.num_outputs} outputs")
        out = np.asarray(out)
        if out.size != 1 or out.ndim != 0 and out.shape != (1,):
            raise AutodiffError(f"grad needs a scalar output, got an output of shape "
                                f"{out.shape}; use vjp for non-scalar outputs")
        if not differentiable(type_of_python_value(out)):
            raise AutodiffError(f"grad of an output of dtype {out.dtype}: integer and bool "
                                f"outputs have no gradient")
        grads = pullback(np.ones_like(out))
        head = grads[:len(idx)]
        rest = grads[len(idx):]
        result = head[0] if single else tuple(head)
        return (result,) + tuple(rest) if rest else result

    return grad_fn


__all__ = ["vjp", "grad", "vjp_graphs", "compile_vjp", "AutodiffError"]
