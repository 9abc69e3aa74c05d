"""Front ends that turn Python into ``ir.Graph``: the tracer (``trace_graph``) and the scripter
(``script.script_graph``).

    >>> g = trace_graph(lambda x: torchlike.tanh(x) * 2.0, (np.ones((2, 3), np.float32),))

Modules, each importing only those listed before it (and ``ir``, ``ops``, ``interpreter``):

* calls.py -- binding an op's arguments, dtype spellings, running eagerly, dispatch to a tracer
* diagnostics.py -- TracerWarning, UnsupportedAttributeError, the user's source line
* numpy_map.py -- numpy ufuncs and array functions on traced values
* traced_value.py -- the proxy, ``TracedValue``, whose operators come from ``ops.python_names``
* tracer.py -- ``Tracer`` (the recorder) and ``trace_graph``
* script_source.py, script_values.py, script_builder.py, script_expressions.py,
  script_statements.py, script.py -- the scripter, from a function's AST to ``script_graph``

Python spellings of ops (names, operators, numpy functions) live in ``ops/python_names.py``;
``torchlike.functional`` builds the ``torchlike.<op>`` namespace on top of this package.
"""
from .tracer import TracedValue, Tracer, TracerWarning, UnsupportedAttributeError, trace_graph

__all__ = ["TracedValue", "Tracer", "TracerWarning", "UnsupportedAttributeError", "trace_graph"]
