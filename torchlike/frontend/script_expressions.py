"""Expression lowering for the scripter: Python expressions -> graph values.

Operators map through ``python_names.OPERATORS`` (``a + b`` is ``aten::add``; ``//`` on Python
numbers is ``aten::floordiv``, as in TorchScript); ``and``/``or`` and chained comparisons
short-circuit through ``prim::If``; calls reach registry ops (``tl.X``, ``np.X``, ``math.X``,
tensor methods), builtins, or Python functions, whose bodies statement lowering inlines.
"""
from __future__ import annotations

import ast

from ..ir.graph import Value
from ..ir.types import BOOL, FLOAT, INT, NONE, DictType, ListType, TupleType
from ..ops.prim_ops import LIST_METHODS
from ..ops.python_names import (
    NUMPY_ARGUMENT_NAMES,
    PythonOperator,
    operator_for_ast,
    operator_for_builtin,
)
from .script_builder import GraphBuilder, unsupported
from .script_modules import ModuleLowering
from .script_values import (
    BoundMethod,
    Builtin,
    Method,
    ModuleValue,
    OpName,
    PythonFunction,
    ScriptCallee,
    Seq,
    Static,
    Sugar,
    unify,
)

__all__ = ["ExpressionLowering"]


class ExpressionLowering(ModuleLowering, GraphBuilder):
    """Lowers expressions (``expr``) and conditions (``condition``, ``truth``) into the current
    block.  Calls of Python functions go to ``inline``, which statement lowering provides."""

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, e):
        """Lower the expression ``e``: a ``Value`` or a compile-time value (script_values.py)."""
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            what = unsupported(e, f"{type(e).__name__} expressions")
            raise self.error(f"{what} are not supported in scripted functions", e)
        return method(e)

    def expr_Constant(self, e):
        if e.value is None or isinstance(e.value, (bool, int, float, str)):
            return self.const(e.value, e)
        raise self.error(f"constants of type {type(e.value).__name__} are not supported", e)

    def expr_Name(self, e):
        return self.lookup(e.id, e)

    def expr_Attribute(self, e):
        return self.attribute(self.expr(e.value), e)

    def expr_Tuple(self, e):
        return Seq([self.expr(x) for x in e.elts])

    def expr_List(self, e):
        return Seq([self.expr(x) for x in e.elts], "list")

    def expr_Dict(self, e):
        """``{"a": x, "b": y}`` (a traced module's dict output): ``prim::DictConstruct`` of
        keys and values of one type each (an empty one needs ``annotate``)."""
        if not e.keys or any(k is None for k in e.keys):
            raise self.error("an empty dict (or ``**``) needs a type: annotate(Dict[K, V], {})",
                             e)
        items = []
        for k, v in zip(e.keys, e.values):
            items += [self.materialize(self.expr(k), k), self.materialize(self.expr(v), v)]
        kt, vt = items[0].type, items[1].type
        for k, v in zip(items[2::2], items[3::2]):
            kt, vt = unify(kt, k.type), unify(vt, v.type)
            if kt is None or vt is None:
                raise self.error("a dict's keys (and its values) must have one type", e)
        return self.create("prim::DictConstruct", items, [DictType(kt, vt)], e).output()

    def expr_BinOp(self, e):
        operator = self.binary_operator(e.op, e)
        left = self.materialize(self.expr(e.left), e.left)
        right = self.materialize(self.expr(e.right), e.right)
        return self.binary(operator, left, right, e)

    def binary_operator(self, op: ast.operator, e) -> PythonOperator:
        """The table's entry for a binary operator node (``ast.Add``), or a ScriptError."""
        operator = operator_for_ast(type(op))
        if operator is None or operator.arity != 2:
            raise self.error(f"operator {type(op).__name__} is not supported", e)
        return operator

    def binary(self, operator: PythonOperator, left: Value, right: Value, e):
        """``left OP right``; on Python numbers some operators record TorchScript's scalar op
        (``//`` is ``aten::floordiv`` there, ``aten::floor_divide`` on tensors)."""
        tensors = left.type.is_tensor() or right.type.is_tensor()
        kind = operator.kind if tensors else operator.scalar_kind()
        return self.emit_op(kind, [left, right], {}, e)

    def expr_UnaryOp(self, e):
        if isinstance(e.op, (ast.USub, ast.UAdd)) and isinstance(e.operand, ast.Constant) \
                and type(e.operand.value) in (int, float):
            value = e.operand.value
            return self.const(-value if isinstance(e.op, ast.USub) else value, e)
        operator = operator_for_ast(type(e.op))
        if isinstance(e.op, ast.Not):  # its operand is a condition, not a value
            return self.emit_op(operator.kind, [self.condition(e.operand)], {}, e)
        v = self.materialize(self.expr(e.operand), e.operand)
        if operator.is_identity:
            return v
        return self.emit_op(operator.kind, [v], {}, e)

    def expr_BoolOp(self, e):
        # a and b -> if a: b else: False;  a or b -> if a: True else: b  (short-circuit)
        result = self.condition(e.values[0])
        for operand in e.values[1:]:
            result = self.short_circuit(result, operand, isinstance(e.op, ast.And), e)
        return result

    def short_circuit(self, first: Value, operand, is_and: bool, e) -> Value:
        """``first and operand`` / ``first or operand`` as a prim::If: ``operand`` is only
        evaluated on the branch that needs it."""
        n = self.create("prim::If", [first], [], e)
        for i in range(2):
            block = n.add_block()
            saved = self.enter(block, dict(self.env))
            if (i == 0) == is_and:
                block.returns = [self.condition(operand)]
            else:
                block.returns = [self.const(not is_and)]
            self.leave(saved)
        return self.add_outputs(n, [BOOL], [None])[0]

    def expr_Compare(self, e):
        left = self.expr(e.left)
        result = None
        for op, comparator in zip(e.ops, e.comparators, strict=False):
            right = self.expr(comparator)
            operator = operator_for_ast(type(op))
            if isinstance(op, (ast.Is, ast.IsNot)):
                cmp = self.identity(left, right, isinstance(op, ast.Is), e)
            elif operator is not None:
                cmp = self.emit_op(operator.kind, [self.materialize(left, e.left),
                                                   self.materialize(right, comparator)], {}, e)
            else:  # in, not in
                raise self.error(f"comparison operator {type(op).__name__} is not supported", e)
            if result is None:
                result = cmp
            else:  # a < b < c: (a < b) and (b < c), b computed once
                first, second = self.truth(result, e), self.truth(cmp, e)
                n = self.create("prim::If", [first], [], e)
                b0, b1 = n.add_block(), n.add_block()
                b0.returns = [second]
                b1.returns = [self.const(False)]
                result = self.add_outputs(n, [BOOL], [None])[0]
            left = right
        return result

    def identity(self, left, right, is_, e):
        """``a is None`` / ``a is not None``: decided while compiling (types say it)."""
        types_ = [(sv.type if isinstance(sv, Value) else None) for sv in (left, right)]
        if NONE in types_:
            other = types_[1] if types_[0] == NONE else types_[0]
            if other is not None:
                return Static((other == NONE) == is_)
        raise self.error("'is' is only supported for comparisons with None", e)

    def expr_IfExp(self, e):
        cond = self.condition(e.test)
        if isinstance(cond, Static):
            return self.expr(e.body if cond.value else e.orelse)
        n = self.create("prim::If", [cond], [], e)
        results = []
        for branch in (e.body, e.orelse):
            block = n.add_block()
            saved = self.enter(block, dict(self.env))
            block.returns = [self.materialize(self.expr(branch), branch)]
            results.append(block.returns[0])
            self.leave(saved)
        t = unify(results[0].type, results[1].type)
        if t is None:
            raise self.error(f"the branches of this conditional expression have different types "
                             f"({results[0].type} and {results[1].type})", e)
        return self.add_outputs(n, [t], [None])[0]

    def expr_Subscript(self, e):
        base = self.expr(e.value)
        index = e.slice
        if isinstance(base, Value) and base.type.is_tensor():
            return self.tensor_index(base, index, e)
        if isinstance(base, ModuleValue):
            return self.index_module(base, index, e)
        if isinstance(index, (ast.Slice, ast.Tuple)):
            raise self.error("slicing and multi-dimensional indexing are supported for tensors "
                             "only in scripted functions", e)
        idx = self.materialize(self.expr(index), index)
        i = idx.constant_value()
        if idx.type == INT and i is not None:  # a literal index (x[-1] folds to a constant)
            if isinstance(base, Seq):
                if not -len(base.items) <= i < len(base.items):
                    raise self.error(f"index {i} is out of range for a tuple of "
                                     f"{len(base.items)} items", e)
                return base.items[i]
            if isinstance(base, Value) and isinstance(base.type, TupleType):
                elems = base.type.elems
                if not -len(elems) <= i < len(elems):
                    raise self.error(f"index {i} is out of range for {base.type}", e)
                return self.create("prim::TupleIndex", [base, self.const(i)], [elems[i]],
                                   e).output()
        if isinstance(base, Seq) and base.kind == "list" and idx.type == INT:
            # a list literal indexed by a loop variable (``stride[d]`` in nn.ConvTranspose2d's
            # _output_padding, called with ``[1, 1]``): the list as a value
            base = self.materialize(base, e.value)
        if isinstance(base, Value) and isinstance(base.type, ListType) and idx.type == INT:
            return self.create("aten::__getitem__", [base, idx], [base.type.elem], e).output()
        if isinstance(base, Value) and isinstance(base.type, DictType):
            return self.create("aten::__getitem__", [base, idx], [base.type.value], e).output()
        raise self.error("indexing is only supported for tuples, lists and dicts (tensor "
                         "indexing and slicing are not supported in scripted functions)", e)

    def tensor_index(self, x: Value, index, e) -> Value:
        """``x[i]``, ``x[1:, ::2]``, ``x[:, None]``, ``x[..., 0]`` as TorchScript records basic
        indexing: one ``aten::select`` (an int), ``aten::slice`` (a slice) or ``aten::unsqueeze``
        (None) per item, left to right, each on the dim the items before it leave."""
        items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
        if sum(isinstance(i, ast.Constant) and i.value is Ellipsis for i in items) > 1:
            raise self.error("an index can only have a single ellipsis ('...')", e)
        dim = 0
        for k, item in enumerate(items):
            if isinstance(item, ast.Constant) and item.value is Ellipsis:
                rank = x.type.rank if x.type.is_tensor() else None
                if rank is None:
                    raise self.error("'...' in an index needs the tensor's rank, which is not "
                                     "known here", item)
                rest = sum(not (isinstance(i, ast.Constant) and i.value is None)
                           for i in items[k + 1:])
                dim = rank - rest
                continue
            if isinstance(item, ast.Constant) and item.value is None:
                x = self.emit_op("aten::unsqueeze", [x, self.const(dim)], {}, item)
                dim += 1
                continue
            if isinstance(item, ast.Slice):
                parts = [self.materialize(self.expr(p), p) if p is not None else self.const(None)
                         for p in (item.lower, item.upper, item.step)]
                if item.step is None:
                    parts[2] = self.const(1)
                for p, what in zip(parts, ("start", "end", "step"), strict=True):
                    if p.type not in (INT, NONE):
                        raise self.error(f"a slice {what} must be an int, got {p.type}", item)
                if not (item.lower is None and item.upper is None and item.step is None):
                    x = self.emit_op("aten::slice", [x, self.const(dim)] + parts, {}, item)
                dim += 1
                continue
            i = self.materialize(self.expr(item), item)
            if i.type != INT:
                raise self.error(f"tensor indices must be ints, slices, None or '...' in "
                                 f"scripted functions (advanced indexing with a {i.type} is "
                                 f"not supported)", item)
            x = self.emit_op("aten::select", [x, self.const(dim), i], {}, item)
        return x

    def truth(self, sv, node) -> Value:
        """A value as a bool Value: tensors and numbers go through aten::Bool."""
        if isinstance(sv, Static):
            return self.const(sv.value, node)
        v = self.materialize(sv, node)
        if v.type == BOOL:
            return v
        if v.type.is_tensor() or v.type in (INT, FLOAT):
            return self.emit_op("aten::Bool", [v], {}, node)
        raise self.error(f"a value of type {v.type} cannot be used as a condition", node)

    def condition(self, e):
        """A condition: a bool Value, or Static when known while compiling."""
        sv = self.expr(e)
        return sv if isinstance(sv, Static) else self.truth(sv, e)

    def condition_value(self, e) -> Value:
        """A condition as a bool Value, even when known while compiling."""
        return self.truth(self.condition(e), e)

    # -- calls -----------------------------------------------------------------------------------
    def expr_Call(self, e):
        callee = self.expr(e.func)
        for a in e.args:
            if isinstance(a, ast.Starred):
                raise self.error("starred arguments (*args) are not supported in scripted "
                                 "functions", a)
        for k in e.keywords:
            if k.arg is None:
                raise self.error("keyword argument unpacking (**kwargs) is not supported in "
                                 "scripted functions", k.value)
        if isinstance(callee, Builtin) and callee.name == "range":
            raise self.error("range() is only supported as the iterable of a for loop", e)
        args = [self.expr(a) for a in e.args]
        kwargs = {k.arg: self.expr(k.value) for k in e.keywords}
        if isinstance(callee, OpName):
            op = self.find_op(callee.name, callee.origin, e.func)
            if callee.origin == "numpy":
                kwargs = {NUMPY_ARGUMENT_NAMES.get(k, k): v for k, v in kwargs.items()}
            return self.emit_op(op.name, args, kwargs, e, op=op)
        if isinstance(callee, Method) and isinstance(callee.value.type, ListType) \
                and callee.name in LIST_METHODS:
            return self.emit_op(LIST_METHODS[callee.name], [callee.value] + args, kwargs, e)
        if isinstance(callee, Method):
            op = self.ops_by_name(callee.name)
            params = () if op is None else op.params or op.python_params  # x.norm(dim=1)
            if not params or params[0].name != "self":
                raise self.error(f"tensor method '{callee.name}' has no op in torchlike's "
                                 f"registry", e.func)
            return self.emit_op(op.name, [callee.value] + args, kwargs, e, op=op)
        if isinstance(callee, Builtin):
            return self.call_builtin(callee.name, args, kwargs, e)
        if isinstance(callee, PythonFunction):
            return self.inline(callee.fn, args, kwargs, e)
        if isinstance(callee, ModuleValue):
            return self.call_module(callee, args, kwargs, e)
        if isinstance(callee, BoundMethod):
            return self.call_bound_method(callee, args, kwargs, e)
        if isinstance(callee, ScriptCallee):
            return self.call_script_function(callee, args, kwargs, e)
        desc = callee.describe() if isinstance(callee, Sugar) else f"a {callee.type} value"
        raise self.error(f"{desc} is not callable in a scripted function", e.func)

    def call_builtin(self, name, args, kwargs, e):
        """``print(...)``, or a builtin that records an op (``len``, ``abs``, ``float``...)."""
        if kwargs and name != "print":
            raise self.error(f"{name}() takes no keyword arguments here", e)
        if name == "print":
            if kwargs:
                raise self.error("print() keyword arguments (sep, end, file) are not supported", e)
            values = [self.materialize(a, e) for a in args]
            self.create("prim::Print", values, [], e)
            return self.const(None)
        if len(args) != 1:
            raise self.error(f"{name}() takes exactly one argument here", e)
        operator = operator_for_builtin(name)
        if name == "len":
            arg = args[0]
            if isinstance(arg, Seq):
                return self.const(len(arg.items), e)
            if isinstance(arg, ModuleValue):
                return self.const(len(arg.info.children()), e)
            v = self.materialize(arg, e)
            if isinstance(v.type, TupleType):
                return self.const(len(v.type.elems), e)
            return self.emit_op(operator.kind, [v], {}, e)
        v = self.materialize(args[0], e)
        if name == "abs":
            return self.emit_op(operator.kind, [v], {}, e)
        if v.type == operator.converts_to:  # float(x) of a float is x
            return v
        if not (v.type.is_tensor() or v.type in (INT, FLOAT, BOOL)):
            raise self.error(f"{name}() of a {v.type} value is not supported", e)
        return self.emit_op(operator.kind, [v], {}, e)

    def inline(self, fn, args, kwargs, e):
        """Compile the Python function ``fn``'s body in place (statement lowering does)."""
        raise NotImplementedError
