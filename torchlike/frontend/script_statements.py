"""Statement lowering for the scripter: statement lists -> nodes, with control flow kept.

``if`` becomes ``prim::If``, ``for i in range(...)`` and ``while`` become ``prim::Loop``.
``break``, ``continue`` and early ``return`` are lowered so that every block ends in one place:
an ``if`` one of whose branches leaves absorbs the statements after it into the branch that goes
on, and a loop that may ``return`` carries a "returned" flag and the value, tested after the
loop.  A scope (function body or loop body) says what a block hands back when control leaves it.
"""
from __future__ import annotations

import ast
import enum
from typing import List, Optional

from ..ir.graph import Block, Value
from ..ir.types import INT, ListType, TupleType
from ..ops import registry
from ..ops.inplace import INPLACE_DUNDERS, inplace_name
from .script_builder import unsupported
from .script_expressions import ExpressionLowering
from .script_values import (
    Builtin,
    ModuleRef,
    OpName,
    PendingType,
    PythonFunction,
    Seq,
    Static,
    Undefined,
    deref,
    unify,
)

__all__ = ["FunctionScope", "LoopScope", "StatementLowering"]

INT64_MAX = 9223372036854775807  # a while loop's trip count: unbounded, as TorchScript's


# -- scopes: what a block hands back when control leaves it ---------------------------------------
class Exit(enum.Enum):
    """How control leaves a statement list."""

    RETURN = "return"
    BREAK = "break"
    CONTINUE = "continue"
    FALL = "fall"  # off its end


class FunctionScope:
    """A function body: every path ends with its return value."""

    loop = False

    def slot_names(self) -> List[str]:
        """What each handed-back value is, for type-mismatch errors."""
        return ["the return value"]

    def exit(self, em: StatementLowering, how: Exit, stmt) -> list:
        """The values the function hands back when control leaves it ``how`` at ``stmt``."""
        if how is Exit.RETURN and stmt.value is not None:
            return [em.expr(stmt.value)]
        return [em.const(None)]


class LoopScope:
    """A loop body: every path ends with ``(continue?, *carried)``."""

    loop = True

    def __init__(self, carried: List[str], test: Optional[ast.expr]):
        self.carried, self.test = carried, test

    def slot_names(self) -> List[str]:
        """The loop condition, then each carried name, for type-mismatch errors."""
        names = [n if not n.startswith("$") else "the value returned inside the loop"
                 for n in self.carried]
        return ["the loop condition"] + [f"'{n}'" if not n.startswith("the") else n
                                         for n in names]

    def exit(self, em: StatementLowering, how: Exit, stmt) -> list:
        """The loop condition and carried values when control leaves the body ``how``; a
        ``return`` sets the "returned" flag and value and stops the loop."""
        if how is Exit.RETURN:
            value = em.expr(stmt.value) if stmt.value is not None else em.const(None)
            em.env["$returned"] = em.const(True)
            em.env["$retval"] = em.materialize(value, stmt)
            cond = em.const(False)
        elif how is Exit.BREAK:
            cond = em.const(False)
        elif self.test is not None:  # while: the condition is computed again at the end
            cond = em.condition_value(self.test)
        else:
            cond = em.const(True)
        return [cond] + [em.materialize(em.lookup(n, stmt), stmt) for n in self.carried]


def _walk(stmts, into_loops=True):
    """Every AST node under ``stmts``; with into_loops=False, loop bodies are skipped."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if not into_loops and isinstance(node, (ast.For, ast.While)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _loop_targets(stmts) -> List[str]:
    """Names bound by for loops under ``stmts`` (undefined after their loop, never carried)."""
    return sorted({n.target.id for n in _walk(stmts)
                   if isinstance(n, ast.For) and isinstance(n.target, ast.Name)})


def _assigned_names(stmts) -> List[str]:
    """Names assigned under ``stmts`` (loop variables excepted): what a loop may carry."""
    targets = set(_loop_targets(stmts))
    return sorted({node.id for node in _walk(stmts) if isinstance(node, ast.Name)
                   and isinstance(node.ctx, ast.Store) and node.id not in targets})


def _contains_return(stmts) -> bool:
    return any(isinstance(n, ast.Return) for n in _walk(stmts))


def _may_exit(stmt, scope) -> bool:
    """Whether control may leave ``scope`` from inside ``stmt`` (return, or break/continue of
    this loop rather than of a nested one)."""
    if _contains_return([stmt]):
        return True
    return scope is not None and scope.loop and any(
        isinstance(n, (ast.Break, ast.Continue)) for n in _walk([stmt], into_loops=False))


class StatementLowering(ExpressionLowering):
    """The whole scripter: statements (``stmts``) on top of expressions, and inlining."""

    def inline(self, fn, args, kwargs, e):
        """Compile a helper's body in place (TorchScript inlines calls too)."""
        if fn.__code__ in self.inlining:
            raise self.error(f"recursive call of '{fn.__name__}': recursion is not supported in "
                             f"scripted functions", e)
        frame = self.frame_of(fn)
        fargs = frame.fdef.args
        if fargs.vararg or fargs.kwarg or fargs.kwonlyargs:
            raise frame.error("*args, **kwargs and keyword-only parameters are not supported in "
                              "scripted functions", frame.fdef)
        params = [a.arg for a in fargs.posonlyargs + fargs.args]
        if len(args) > len(params):
            raise self.error(f"{fn.__name__}() takes {len(params)} arguments, got {len(args)}", e)
        env = dict(zip(params, args, strict=False))
        defaults = fn.__defaults__ or ()
        first_default = len(params) - len(defaults)
        for i, p in enumerate(params[len(args):], start=len(args)):
            if p in kwargs:
                env[p] = kwargs.pop(p)
            elif i >= first_default:
                env[p] = self.python_value(defaults[i - first_default], p, e)
            else:
                raise self.error(f"{fn.__name__}() is missing argument '{p}'", e)
        if kwargs:
            raise self.error(f"{fn.__name__}() got unexpected arguments {sorted(kwargs)}", e)
        saved = (self.env, self.frame)
        self.env, self.frame = env, frame
        self.inlining.append(fn.__code__)
        try:
            result = self.stmts(frame.fdef.body, FunctionScope())[0]
        finally:
            self.inlining.pop()
            self.env, self.frame = saved
        return result

    # -- statements ----------------------------------------------------------------------------
    def stmts(self, stmts, scope) -> list:
        """Emit a statement list; returns the values ``scope`` hands back at its end."""
        stmts = list(stmts)
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(s, ast.Return):
                return scope.exit(self, Exit.RETURN, s)
            if isinstance(s, (ast.Break, ast.Continue)):
                how = Exit.BREAK if isinstance(s, ast.Break) else Exit.CONTINUE
                if scope is None or not scope.loop:
                    raise self.error(f"'{how.value}' outside a loop", s)
                return scope.exit(self, how, s)
            if isinstance(s, ast.If) and _may_exit(s, scope):
                return self.if_exit(s.test, s.body + rest, s.orelse + rest, scope, s)
            if isinstance(s, ast.For):
                unrolled = self.unroll_module_loop(s)
                if unrolled is not None:  # for layer in self.layers: one copy per child
                    return self.stmts(unrolled + rest, scope)
            if isinstance(s, (ast.For, ast.While)):
                if self.loop(s):  # it may have returned: test the flag, the rest goes on else
                    test = ast.copy_location(ast.Name("$returned", ast.Load()), s)
                    ret = ast.copy_location(ast.Return(ast.Name("$retval", ast.Load())), s)
                    ret.value = ast.copy_location(ret.value, s)
                    return self.if_exit(test, [ret], rest, scope, s)
                continue
            self.stmt(s)
        return scope.exit(self, Exit.FALL, None) if scope is not None else []

    def stmt(self, s):
        """Lower one statement that does not leave the scope (``stmts`` handles those)."""
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            what = unsupported(s, f"{type(s).__name__} statements")
            raise self.error(f"{what} are not supported in scripted functions", s)
        method(s)

    def stmt_Pass(self, s):
        pass

    def stmt_Expr(self, s):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return  # a docstring
        self.expr(s.value)

    def stmt_Assign(self, s):
        value = self.expr(s.value)
        for target in s.targets:
            self.assign(target, value, s)

    def stmt_AnnAssign(self, s):
        if s.value is None:
            raise self.error("a declaration without a value is not supported", s)
        self.assign(s.target, self.expr(s.value), s)

    def stmt_AugAssign(self, s):
        if not isinstance(s.target, ast.Name):
            raise self.error("augmented assignment is only supported to plain names", s.target)
        operator = self.binary_operator(s.op, s)
        left = self.materialize(self.lookup(s.target.id, s.target), s.target)
        right = self.materialize(self.expr(s.value), s.value)
        result = self.binary(operator, left, right, s)
        node = result.node if isinstance(result, Value) else None
        twin = inplace_name(node.kind) if node is not None else None
        if left.type.is_tensor() and node is not None and node.inputs and node.inputs[0] is left \
                and operator.dunder is not None and "__i" + operator.dunder[2:] in INPLACE_DUNDERS \
                and registry.lookup(twin) is not None:
            # x += y on a tensor writes into x, as in Python and TorchScript: aten::add_
            node.kind = twin
            result.type = left.type
        self.assign(s.target, result, s)

    def assign(self, target, value, s):
        """Bind ``target`` (a name, or a tuple/list of targets to unpack into) to ``value``."""
        if isinstance(target, ast.Name):
            if isinstance(value, Seq) and value.kind == "list" \
                    and target.id in self.frame.mutated_lists:
                value = self.materialize(value, s)  # ys = [] ... ys.append(y): a list value
            if isinstance(value, Value) and value.node is not None and value.name.isdigit() \
                    and value.node.kind != "prim::Constant":
                value.name = self.graph.fresh_name(target.id)  # %new_h, as TorchScript names it
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(t, ast.Starred) for t in target.elts):
                raise self.error("starred assignment is not supported", target)
            n = len(target.elts)
            if isinstance(value, Seq):
                items = value.items
            else:
                v = self.materialize(value, s.value if hasattr(s, "value") else s)
                if isinstance(v.type, TupleType):
                    items = self.create("prim::TupleUnpack", [v], list(v.type.elems), s).outputs
                elif isinstance(v.type, ListType):
                    items = self.create("prim::ListUnpack", [v], [v.type.elem] * n, s).outputs
                else:
                    raise self.error(f"cannot unpack a value of type {v.type}", target)
            if len(items) != n:
                raise self.error(f"cannot unpack {len(items)} values into {n} names", target)
            for t, item in zip(target.elts, items, strict=False):
                self.assign(t, item, s)
        elif isinstance(target, ast.Subscript):
            raise self.error("assignment to an index or slice (x[i] = ...) is not supported in "
                             "scripted functions", target)
        elif isinstance(target, ast.Attribute):
            raise self.error("attribute assignment is not supported in scripted functions",
                             target)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}", target)

    def stmt_Assert(self, s):
        cond = self.condition(s.test)
        if isinstance(cond, Static) and cond.value:
            return
        if s.msg is not None and not (isinstance(s.msg, ast.Constant)
                                      and isinstance(s.msg.value, str)):
            raise self.error("assert messages must be string literals", s.msg)
        message = self.const("AssertionError: " + (s.msg.value if s.msg is not None else ""),
                             s.msg or s)
        n = self.create("prim::If", [self.truth(cond, s)], [], s)
        n.add_block()
        fail = n.add_block()
        saved = self.enter(fail, self.env)
        self.create("prim::RaiseException", [message, self.const(None)], [], s)
        self.leave(saved)

    def stmt_If(self, s):
        """An if that every path leaves normally: outputs are the names either branch set."""
        cond = self.condition(s.test)
        if isinstance(cond, Static):
            self.stmts(s.body if cond.value else s.orelse, None)
            return
        n = self.create("prim::If", [cond], [], s)
        before = self.env
        envs, blocks = [], []
        for branch in (s.body, s.orelse):
            block = n.add_block()
            saved = self.enter(block, dict(before))
            self.stmts(branch, None)
            envs.append(self.env)
            blocks.append(block)
            self.leave(saved)
        names = [k for k in dict.fromkeys(list(envs[0]) + list(envs[1]))
                 if envs[0].get(k) is not before.get(k) or envs[1].get(k) is not before.get(k)]
        merged, out_names, out_types = [], [], []
        line = self.frame.loc(s)[0]
        for name in names:
            a, b = envs[0].get(name), envs[1].get(name)
            missing = [side for side, v in (("true", a), ("false", b))
                       if v is None or isinstance(v, Undefined)]
            if missing:
                self.env[name] = Undefined(f"'{name}' is not defined in the {missing[0]} branch "
                                            f"of the if at line {line}")
                continue
            if isinstance(a, (ModuleRef, PythonFunction, OpName, Builtin)) and a is b:
                self.env[name] = a
                continue
            values = []
            for block, v in zip(blocks, (a, b), strict=False):
                saved = self.enter(block, self.env)
                values.append(self.materialize(v, s))
                self.leave(saved)
            t = unify(values[0].type, values[1].type)
            if t is None:
                raise self.error(f"'{name}' has type {values[0].type} in the true branch and "
                                 f"{values[1].type} in the false branch", s)
            merged.append(values)
            out_names.append(name)
            out_types.append(t)
        blocks[0].returns = [v[0] for v in merged]
        blocks[1].returns = [v[1] for v in merged]
        for name, out in zip(out_names, self.add_outputs(n, out_types, out_names), strict=False):
            self.env[name] = out

    def if_exit(self, test, body, orelse, scope, where) -> list:
        """An if with a branch that leaves the scope: both branches run to the scope's end,
        so the if's outputs are what the scope hands back."""
        cond = self.condition(test)
        if isinstance(cond, Static):
            return self.stmts(body if cond.value else orelse, scope)
        n = self.create("prim::If", [cond], [], where)
        results = []
        for branch in (body, orelse):
            block = n.add_block()
            saved = self.enter(block, dict(self.env))
            block.returns = [self.materialize(v, where) for v in self.stmts(branch, scope)]
            results.append(block.returns)
            self.leave(saved)
        out_types = []
        for i, (a, b) in enumerate(zip(*results, strict=False)):
            t = unify(a.type, b.type)
            if t is None:
                slot = scope.slot_names()[min(i, len(scope.slot_names()) - 1)]
                raise self.error(f"{slot} has type {a.type} on one path and {b.type} on another",
                                 where)
            out_types.append(t)
        return self.add_outputs(n, out_types, [None] * len(out_types))

    def loop(self, s) -> bool:
        """Emit a for-range or while loop as prim::Loop; True if a return may leave it."""
        kind = "for" if isinstance(s, ast.For) else "while"
        if s.orelse:
            raise self.error(f"{kind}-else is not supported in scripted functions", s)
        start = step = None
        if isinstance(s, ast.For):
            if not isinstance(s.target, ast.Name):
                raise self.error("for loops must bind a single name", s.target)
            it = s.iter
            callee = self.expr(it.func) if isinstance(it, ast.Call) else None
            if not (isinstance(callee, Builtin) and callee.name == "range"):
                raise self.error("for loops are only supported over range(...) in scripted "
                                 "functions", it)
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.error("range() takes 1 to 3 positional arguments", it)
            bounds = [self.materialize(self.expr(a), a) for a in it.args]
            for a, v in zip(it.args, bounds, strict=False):
                if v.type != INT:
                    raise self.error(f"range() arguments must be int, not {v.type}", a)
            if len(bounds) == 1:
                trip = bounds[0]
            else:
                start, stop = bounds[0], bounds[1]
                step = bounds[2] if len(bounds) == 3 else self.const(1)
                # As TorchScript: the trip count is __range_length(start, stop, step) and the
                # loop variable __derive_index(iteration, start, step).
                trip = self.emit_op("aten::__range_length", [start, stop, step], {}, it)
            init_cond = self.const(True, s)
            test = None
            body_names = [n for n in _assigned_names(s.body) if n != s.target.id]
        else:
            init_cond = self.truth(self.condition(s.test), s.test)
            trip = self.const(INT64_MAX, s)
            test = s.test
            body_names = _assigned_names(s.body)
        carried = [n for n in body_names if isinstance(self.env.get(n), (Value, Seq, Static))]
        may_return = _contains_return(s.body)
        pending = None
        if may_return:
            self.env["$returned"] = self.const(False)
            if "$retval" not in self.env:
                pending = PendingType()
                self.env["$retval"] = self.create("prim::Uninitialized", [], [pending],
                                                  None).output()
            carried += ["$returned", "$retval"]
        inits = [self.materialize(self.env[n], s) for n in carried]
        n = self.create("prim::Loop", [trip, init_cond] + inits, [], s)
        body = n.add_block()
        index = body.add_param(None, INT)
        env = dict(self.env)
        for name, v in zip(carried, inits, strict=False):
            env[name] = body.add_param(name.lstrip("$"), v.type)
        saved = self.enter(body, env)
        if isinstance(s, ast.For):
            if step is not None:
                index = self.emit_op("aten::__derive_index", [index, start, step], {}, s.iter)
            self.env[s.target.id] = index
        returns = [self.materialize(v, s) for v in self.stmts(s.body, LoopScope(carried, test))]
        body.returns = returns
        self.leave(saved)
        out_types = []
        for name, param, v in zip(carried, body.params[1:], returns[1:], strict=False):
            t = unify(param.type, v.type)
            if t is None:
                raise self.error(f"loop-carried variable '{name}' has type {param.type} before "
                                 f"the loop and {v.type} at the end of its body", s)
            out_types.append(t)
        if pending is not None:
            _resolve_pending(self.env["$retval"], body)
        out_types = [deref(t) for t in out_types]
        outs = self.add_outputs(n, out_types, [c.lstrip("$") for c in carried])
        for name, out in zip(carried, outs, strict=False):
            self.env[name] = out
        line = self.frame.loc(s)[0]
        for name in body_names:
            if name not in carried and name not in self.env:
                self.env[name] = Undefined(f"'{name}' is assigned inside the loop at line {line} "
                                            f"but not defined before it")
        for name in _loop_targets([s]):
            self.env[name] = Undefined(f"the loop variable '{name}' cannot be used after the "
                                        f"loop at line {line}")
        return may_return


def _resolve_pending(uninit: Value, body: Block) -> None:
    """Give the loop's "returned value" slot its final type everywhere it was used."""
    uninit.type = deref(uninit.type)
    stack = [body]
    while stack:
        block = stack.pop()
        for p in block.params:
            p.type = deref(p.type)
        for node in block.nodes:
            for o in node.outputs:
                o.type = deref(o.type)
            stack.extend(node.blocks)
