"""Front ends that turn Python into ``ir.Graph``: the tracer (``trace_graph``).

    >>> g = trace_graph(lambda x: torchlike.tanh(x) * 2.0, (np.ones((2, 3), np.float32),))
"""
from .tracer import TracedValue, Tracer, TracerWarning, UnsupportedAttributeError, trace_graph

__all__ = ["TracedValue", "Tracer", "TracerWarning", "UnsupportedAttributeError", "trace_graph"]
