"""Every ATen op PyTorch tags ``torch.Tag.pointwise`` is in torchlike's registry (and fusible),
or listed with its reason in ``torchlike/ops/unsupported.py`` -- the one list of exceptions.

The ops are enumerated from ``torch.ops.aten`` of the installed PyTorch (the ``torch`` fixture:
without it these tests skip); in-place variants (``add_``, ``__ilshift__``) and ``_foreach_*``
ops are left out (graphs torchlike fuses are functional).  Graph spellings that TorchScript
normalizes away (``aten::clip`` is ``aten::clamp``) count as registered through the registry's
``KIND_ALIASES``.  The registry-side checks (each registered op runs on every backend and
matches PyTorch over dtypes and special values) are ``test_ops_elementwise.py``,
``test_fuser_cpu.py`` and ``test_cuda_codegen.py``, which enumerate the registry.
"""
from __future__ import annotations

import pytest

from torchlike.ops import registry
from torchlike.ops.unsupported import UNSUPPORTED_POINTWISE

# Registered but not as an elementwise entry the partitioner fuses, and why.
NOT_FUSED = {
    "aten::clone": "a shape op in the registry (a copy with a memory format), interpreted",
    "aten::frexp": "two outputs (mantissa, int32 exponent): interpreted",
    **{f"aten::{name}": "interpreted in numpy: series and continued fractions with data-dependent "
                        "trip counts, no kernel helper (ops/special_more.py)"
       for name in ("igamma", "igammac", "mvlgamma", "polygamma", "special_zeta",
                    "special_erfcx", "special_log_ndtr", "special_ndtri")},
}

_IN_PLACE_DUNDERS = {f"__i{op}__" for op in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or",
    "xor")}


def _in_scope(name: str) -> bool:
    in_place = (name.endswith("_") and not name.endswith("__")) or name in _IN_PLACE_DUNDERS
    return not in_place and not name.startswith("_foreach")


@pytest.fixture(scope="module")
def pointwise(torch):
    """``aten::<name>`` of every functional ATen op with an overload tagged pointwise."""
    names = set()
    # dir(torch.ops.aten) lists only the ops loaded so far (it grows as tests touch ops): take
    # every name from the registered schemas instead
    every = {sc.name.split("::", 1)[1] for sc in torch._C._jit_get_all_schemas()
             if sc.name.startswith("aten::")}
    for name in sorted(every | set(dir(torch.ops.aten))):
        if not _in_scope(name):
            continue
        packet = getattr(torch.ops.aten, name, None)
        if not hasattr(packet, "overloads"):
            continue
        if any(torch.Tag.pointwise in getattr(packet, o).tags for o in packet.overloads()):
            names.add(f"aten::{name}")
    assert len(names) > 150, f"only {len(names)} pointwise ops found: enumeration broken?"
    return names


def test_every_pointwise_op_is_registered_or_listed(pointwise):
    missing = sorted(n for n in pointwise if registry.lookup(n) is None
                     and n not in UNSUPPORTED_POINTWISE)
    assert not missing, ("pointwise ops neither registered nor listed in ops/unsupported.py: "
                         f"{missing}")


def test_registered_pointwise_ops_are_fusible(pointwise):
    """Elementwise entries, or ops with an elementwise overload (max(Tensor, Tensor))."""
    unfused = sorted(n for n in pointwise if (op := registry.lookup(n)) is not None
                     and not op.is_elementwise and op.elementwise_overload is None
                     and n not in NOT_FUSED)
    assert not unfused, f"registered pointwise ops the partitioner cannot fuse: {unfused}"


def test_listed_ops_are_not_registered():
    """The exception list holds no op the registry has (a stale entry would hide nothing, but
    would mislead)."""
    both = sorted(n for n in UNSUPPORTED_POINTWISE if registry.lookup(n) is not None)
    assert not both, f"in ops/unsupported.py but registered: {both}"
    assert all(reason.strip() for reason in UNSUPPORTED_POINTWISE.values())


def test_listed_ops_are_pointwise_in_torch(pointwise):
    stale = sorted(set(UNSUPPORTED_POINTWISE) - pointwise)
    assert not stale, f"listed but not a pointwise op of this PyTorch: {stale}"


def test_unsupported_op_error_names_the_reason():
    from torchlike.errors import UnsupportedOpError
    with pytest.raises(UnsupportedOpError, match="Bessel"):
        registry.get("aten::special_bessel_j0")
