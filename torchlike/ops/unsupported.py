"""PyTorch's pointwise ops that torchlike has no registry entry for, and why: the one list.

Every ATen op PyTorch 2.13 tags ``torch.Tag.pointwise`` is either in the registry (an
elementwise entry, fusible, checked against PyTorch over every dtype and special value) or
here with the reason; ``tests/test_pointwise_coverage.py`` enumerates ``torch.ops.aten`` and
checks both directions.  ``registry.get`` names the reason when a graph uses one of these.
In-place variants (``add_``, ``__ilshift__``) and ``_foreach_*`` ops are out of scope: graphs
torchlike fuses are functional.  Complex dtypes are unsupported throughout, so ops are listed
here only for what they lack on real dtypes.
"""
from __future__ import annotations

from typing import Dict

_BESSEL = ("Bessel/Airy function: a Cephes-style rational approximation per function, not "
           "implemented yet")
_POLYNOMIAL = ("orthogonal polynomial of a per-element integer degree n: a recurrence whose trip "
               "count is data (n up to 2**63), not implemented yet")

UNSUPPORTED_POINTWISE: Dict[str, str] = {
    # autodiff kernels: none left out -- every pointwise ATen backward op is registered
    # (ops/elementwise_backward.py; gelu_backward in ops/elementwise_more.py)
    # not elementwise in torchlike's sense, or not registered yet
    "aten::equal": ("one Python bool for whole tensors (shapes and values equal): a reduction, "
                    "not an elementwise op; not registered yet"),
    "aten::_conj_physical": ("ATen's private kernel behind conj_physical (registered): graphs "
                             "print the public op"),
    # special functions without an implementation yet (erfcx, ndtri, zeta, igamma & co. are
    # interpreted: ops/special_more.py)
    **{f"aten::special_{name}": _BESSEL for name in (
        "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
        "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
        "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0")},
    **{f"aten::special_{name}": _POLYNOMIAL for name in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
        "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
        "laguerre_polynomial_l", "legendre_polynomial_p")},
}
