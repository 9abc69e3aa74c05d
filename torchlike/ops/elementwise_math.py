"""More float math ops (inverse hyperbolics, erfinv): ``elementwise(...)`` entries as in
``elementwise.py`` (which is at the module-size limit), with the same conventions: the numpy
ref computes in the compute dtype, Numba templates call ``tl_<name>_f32`` helpers for float32
(``cpu_backend/scalar_math.py``), CUDA templates call ``prelude.cuh``'s ``tl_<name>``.
"""
from __future__ import annotations

from .elementwise_base import elementwise

# ----- inverse hyperbolic functions -----

_INVERSE_HYPERBOLIC = [  # name, numpy function, numpy alias
    ("asinh", "arcsinh"),
    ("acosh", "arccosh"),
    ("atanh", "arctanh"),
]
for _name, _np_name in _INVERSE_HYPERBOLIC:
    elementwise(f"aten::{_name}", "Tensor self",
                ref=lambda xp, a, _n=_np_name: getattr(xp, _n)(a), dtype_rule="float",
                numba={"float32": f"tl_{_name}_f32({{self}})",
                       "default": f"np.{_np_name}({{self}})"},
                cuda=f"tl_{_name}({{self}})", aliases=(_np_name,))

# ----- special functions -----
