"""One walk over a fusion group's ops, shared by every kernel language.

tinygrad's renderers are the model: a language is a table of spellings -- the type a variable of
each dtype holds (``TYPE``), conversions (``CAST``), how an absent optional operand reads
(``NONE``), how half-precision elements are loaded and stored (``LOAD``/``STORE``), literals and
statements -- and this base class walks the ops once for all of them:

* loads: one variable ``a<k>`` per array (or chunk) the group reads, in ``spec.used_arrays``
  order, at the element the language's skeleton gives (``read_at``);
* one statement ``v<k> = <op>`` per op: the registry template of the language
  (``OpInfo.template_text``) with its ``{placeholders}`` filled -- operands converted to the
  dtype the op computes in, attributes by the language's policy, an absent operand as ``NONE``
  -- and the result converted to the op's out dtype (every conversion as ``ops/casting.py``
  defines it: float -> integer through the languages' ``tl_float_to_<dtype>`` helpers);
* stores: each kernel output (``kernel_spec.kernel_outputs``) written where ``write_at`` says.

A language overrides only what differs: the Numba renderer (``cpu_backend.codegen``) hoists
typed literals out of serial loops and skips the result cast of plain float arithmetic, the CUDA
renderer (``cuda_backend.codegen``) rounds half-precision results with prelude helpers.  The
loop skeletons and kernel parameters stay with each backend.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, Iterable, List, Optional

import numpy as np

from ..ir.graph import Value
from ..ops.casting import FLOAT_TO_INT_HELPER, cast_value
from ..ops.dtypes import FLOAT_DTYPES, INT_DTYPES
from .backend import GroupSpec, OpInfo, Ref, Unsupported, ValueInfo, ValueKind
from .kernel_spec import kernel_outputs

__all__ = ["Renderer", "uses_err", "PLACEHOLDER"]

PLACEHOLDER = re.compile(r"\{(\w+)\}")
_ERR = re.compile(r"\berr\b")


def uses_err(lines: Iterable[str]) -> bool:
    """True if the code names ``err``: an op can divide integers by zero (its helper sets the
    flag), so the kernel takes the flag as a parameter."""
    return any(_ERR.search(s) for s in lines)


class Renderer:
    """The language-neutral part of a kernel renderer (see the module docstring)."""

    language = ""                      # the registry's template key ("numba", "cuda")
    NONE = ""                          # an absent optional operand (clamp's min=None)
    TYPE: Dict[str, str] = {}          # dtype -> the type its variables hold
    CAST: Dict[str, str] = {}          # dtype -> format converting ``{}`` to it
    LOAD: Dict[str, str] = {}          # dtype -> format of a loaded element (default: as is)
    STORE: Dict[str, str] = {}         # dtype -> format of a stored value (default: as is)
    HALF: frozenset = frozenset()      # dtypes that need the language's half-precision helpers
    NO_ERR: Optional[str] = None       # stands for ``err`` where no division can be by zero

    def __init__(self, spec: GroupSpec):
        self.spec = spec
        self.names: Dict[Value, str] = {}
        self.outputs: List[Value] = kernel_outputs(spec)

    # -- spellings every language provides -------------------------------------------------------
    def literal(self, value, dtype: str) -> str:
        """``value`` as a literal holding ``dtype``."""
        raise NotImplementedError

    def declare(self, name: str, dtype: str, value: str) -> str:
        """The statement defining variable ``name`` of ``dtype``."""
        raise NotImplementedError

    def assign(self, target: str, value: str) -> str:
        """The statement storing ``value`` into the array element ``target``."""
        raise NotImplementedError

    def scalar_name(self, index: int) -> str:
        """The kernel parameter holding the group's Python-scalar input ``index``."""
        raise NotImplementedError

    # -- conversions ---------------------------------------------------------------------------
    def same_type(self, have: str, want: str) -> bool:
        return self.TYPE[have] == self.TYPE[want]

    def convert(self, expr: str, have: Optional[str], want: str) -> str:
        """``expr`` (holding ``have``; None: unknown) converted to ``want``, always spelled.
        A float becomes an integer through ``tl_float_to_<dtype>``, which every language's
        helpers define as ``ops/casting.py`` does (a plain conversion is undefined when the
        value does not fit)."""
        if have in FLOAT_DTYPES and want in INT_DTYPES:
            return f"{FLOAT_TO_INT_HELPER.format(want)}({expr})"
        return self.CAST[want].format(expr)

    def cast(self, expr: str, have: Optional[str], want: str) -> str:
        """``expr`` (a variable holding ``have``) as a value of ``want``: nothing to spell when
        both live in the same type."""
        if have is not None and self.same_type(have, want):
            return expr
        return self.convert(expr, have, want)

    # -- op arguments --------------------------------------------------------------------------
    def constant(self, info: ValueInfo, want: str) -> str:
        """A constant operand, as a value of ``want``."""
        return self.literal(info.const, want)

    def variable(self, r: Ref, info: ValueInfo) -> str:
        """The variable or parameter holding a non-constant argument."""
        return self.scalar_name(info.input) if info.kind == ValueKind.SCALAR else self.names[r]

    def operand(self, r: Ref, want: str) -> str:
        """An op argument as a value of ``want``."""
        info = self.spec.info(r)
        if info.kind == ValueKind.CONST:
            return self.constant(info, want)
        return self.cast(self.variable(r, info), info.carrier, want)

    def attribute(self, o: OpInfo, name: str, r: Ref) -> str:
        """Attributes meet the op's operands in its compute dtype, as a Python scalar meets an
        array of that dtype in the interpreter (rounded to a half common dtype first where the
        op says: ``attribute_dtype``)."""
        return self.operand(r, self.attribute_dtype(o, name))

    @staticmethod
    def attribute_dtype(o: OpInfo, name: str) -> str:
        """The dtype a numeric attribute is converted to: the compute dtype, or the half
        common dtype for ``op.half_attrs`` (add's alpha, as PyTorch's kernels read it)."""
        return o.half if o.half is not None and name in o.op.half_attrs else o.compute

    def op_expr(self, o: OpInfo) -> str:
        """The op's template with every placeholder it names filled (each rendered once, in
        the order the template names them)."""
        text = o.template_text(self.language)
        operands = dict(zip(o.op.operand_names, zip(o.operands, o.operand_dtypes, strict=True),
                            strict=True))
        if self.NO_ERR is not None and _ERR.search(text) and self._nonzero_constant(
                operands.get("other")):
            # An op whose template names ``err`` divides by its ``other``: a nonzero integral
            # constant cannot be zero, so the kernel needs no flag (on a GPU, reading it back
            # costs a synchronization per call).
            text = _ERR.sub(self.NO_ERR, text)
        filled: Dict[str, str] = {}

        def fill(m) -> str:
            name = m.group(1)
            if name not in filled:
                if name in operands:
                    r, want = operands[name]
                    filled[name] = self.NONE if r is None else self.operand(r, want)
                elif name in o.attrs:
                    filled[name] = self.attribute(o, name, o.attrs[name])
                else:
                    raise Unsupported(f"compile failed: template of {o.op.name} names unknown "
                                      f"{{{name}}}")
            return filled[name]
        return PLACEHOLDER.sub(fill, text)

    def _nonzero_constant(self, operand) -> bool:
        """``operand`` (ref, dtype wanted) is a constant that stays nonzero in that dtype
        (int8's 256 wraps to 0: it keeps the flag)."""
        if operand is None or operand[0] is None:
            return False
        info = self.spec.info(operand[0])
        if info.kind != ValueKind.CONST or not isinstance(info.const, (bool, int, float)):
            return False
        try:
            with np.errstate(all="ignore"):
                return bool(cast_value(info.const, operand[1]) != 0)
        except (TypeError, ValueError, OverflowError):
            return False

    def result(self, o: OpInfo, expr: str) -> str:
        """The op's value ``expr`` (of its compute dtype) converted to its out dtype."""
        return self.convert(f"({expr})", o.compute, o.out_dtype)

    # -- statements ----------------------------------------------------------------------------
    def load(self, element: str, dtype: str) -> str:
        return self.LOAD.get(dtype, "{}").format(element)

    def store(self, value: str, dtype: str) -> str:
        return self.STORE.get(dtype, "{}").format(value)

    def body(self, read_at: Callable[[int, Value], str],
             write_at: Callable[[int, Value], str]) -> List[str]:
        """Loads, one statement per op, stores.  ``read_at(k, value)`` is the element the k-th
        array read loads, ``write_at(j, value)`` the element the j-th kernel output stores."""
        spec, lines = self.spec, []
        for k, v in enumerate(spec.used_arrays):
            self.names[v] = f"a{k}"
            dtype = spec.values[v].dtype
            lines.append(self.declare(f"a{k}", dtype, self.load(read_at(k, v), dtype)))
        for k, o in enumerate(spec.ops):
            self.names[o.node.output()] = f"v{k}"
            lines.append(self.declare(f"v{k}", o.out_dtype, self.result(o, self.op_expr(o))))
        for j, v in enumerate(self.outputs):
            lines.append(self.assign(write_at(j, v),
                                     self.store(self.names[v], spec.values[v].dtype)))
        return lines

    def half_dtypes(self) -> frozenset:
        """The ``HALF`` dtypes the kernel reads, writes or rounds to."""
        spec = self.spec
        used = {spec.values[v].dtype for v in spec.used_arrays + self.outputs}
        used.update(o.out_dtype for o in spec.ops)
        return self.HALF & used
