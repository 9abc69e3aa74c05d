"""Derivatives of graphs: ``vjp``, ``grad``, ``vjp_graphs`` (re-exported by ``torchlike.jit``).

``engine.py`` turns a typed graph into a forward graph (outputs + saved values) and a backward
graph (cotangents + saved values -> gradients) using the derivative rule in each op's registry
entry (``OpDef.vjp``; ``torchlike/ops/derivatives*.py``); ``api.py`` captures programs,
specializes them and runs both graphs through the usual passes and fuser.
"""
from .api import compile_vjp, grad, vjp, vjp_graphs
from .engine import AutodiffError, differentiate

__all__ = ["vjp", "grad", "vjp_graphs", "compile_vjp", "differentiate", "AutodiffError"]
