"""The corpus: graphs printed by PyTorch 2.13 with its own answers (tests/corpus/README.md).

Every graph parses, prints back byte for byte, and the interpreter reproduces PyTorch's outputs
for every input set (a traced graph only for the input set it was traced on where control flow
was baked in)."""
import pytest
from corpus_utils import CASES, assert_matches, flatten_outputs, graph_files, graph_text, input_sets

from torchlike.interpreter import run
from torchlike.ir import parse_graph

CASE_GRAPHS = [(c, w) for c in CASES for w in graph_files(c)]
# Traced graphs bake in the branch their example took (corpus README).
TRACE_BAKES_CONTROL_FLOW = {"decision_gate", "script_if_else_chains"}


@pytest.mark.parametrize("case,which", CASE_GRAPHS)
def test_parses_and_prints_back(case, which):
    text = graph_text(case, which)
    graph = parse_graph(text)
    assert str(graph) == text
    assert str(parse_graph(str(graph))) == text


@pytest.mark.parametrize("case,which", CASE_GRAPHS)
def test_interpreter_reproduces_pytorch(case, which):
    graph = parse_graph(graph_text(case, which))
    for label, args, expected in input_sets(case):
        if "traced" in which and label != "inputs" and case in TRACE_BAKES_CONTROL_FLOW:
            continue
        outputs = flatten_outputs(run(graph, *args))
        assert len(outputs) == len(expected), f"{case}/{which}/{label}: output count"
        for i, actual in enumerate(outputs):
            assert_matches(actual, expected[f"out{i}"], f"{case}/{which}/{label}/out{i}")


@pytest.mark.parametrize("case,which", CASE_GRAPHS)
def test_fused_on_cpu_reproduces_pytorch(case, which, strict_cpu):
    """Issue acceptance: fused, run with backend=cpu in strict mode (a fallback would raise),
    every case reproduces PyTorch, and every fusion group that ran was a compiled kernel."""
    from torchlike import jit
    from torchlike.fuser import executor
    from torchlike.interpreter import Interpreter
    fused = jit.fuse(parse_graph(graph_text(case, which)))
    launches = []

    def counting_runner(node, xp, args):
        launches.append(node)
        return executor.run_fusion_group(node, xp, args)

    for label, args, expected in input_sets(case):
        if "traced" in which and label != "inputs" and case in TRACE_BAKES_CONTROL_FLOW:
            continue
        executor.clear_caches()  # so this run has to fetch each kernel (compile or disk)
        jit.reset_stats()
        launches.clear()
        outputs = flatten_outputs(Interpreter(fused, fusion_runner=counting_runner).run(*args))
        assert len(outputs) == len(expected)
        for i, actual in enumerate(outputs):
            assert_matches(actual, expected[f"out{i}"], f"fused {case}/{which}/{label}/out{i}")
        s = jit.stats()
        assert s["fallbacks"] == {}
        if launches:
            assert s["kernels_compiled"] + s["disk_hits"] >= 1, s


def test_specialized_graph_with_other_shapes_says_why():
    """A graph printed after PyTorch's fuser is specialized (prim::TypeCheck); other shapes
    would take the fallback function, whose body the text does not hold: a clear error."""
    import numpy as np

    from torchlike import jit
    from torchlike.errors import ExecutionError
    graph = parse_graph(graph_text("silu_swish", "te_fused"))
    x = np.ones((2, 3), np.float32)  # specialized for Float(5, 7)
    for g in (graph, jit.fuse(graph)):
        with pytest.raises(ExecutionError, match="fallback function"):
            jit.run(g, x)
