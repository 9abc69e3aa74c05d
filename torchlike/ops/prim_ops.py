"""``prim::`` ops other than control flow and constants (those are the interpreter's own)."""
from __future__ import annotations

from .registry import OpDef, register


def _prim(name, impl, num_outputs=1, pure=True):
    return register(OpDef(name, (), impl, category="prim", num_outputs=num_outputs, pure=pure))


_prim("prim::TupleConstruct", lambda xp, *xs: tuple(xs))
_prim("prim::TupleUnpack", lambda xp, t: list(t), num_outputs=None)
_prim("prim::ListConstruct", lambda xp, *xs: list(xs))
_prim("prim::ListUnpack", lambda xp, t: list(t), num_outputs=None)


def _get_attr(xp, obj, name):
    if isinstance(obj, dict):
        return obj[name]
    return getattr(obj, name)


_prim("prim::GetAttr", _get_attr)
