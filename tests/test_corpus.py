"""The corpus: graphs printed by PyTorch 2.13 with its own answers (tests/corpus/README.md).

Every graph parses, prints back byte for byte, and the interpreter reproduces PyTorch's outputs
for every input set (a traced graph only for the input set it was traced on where control flow
was baked in)."""
import pytest

import torchlike
from torchlike.interpreter import run
from torchlike.ir import parse_graph

from corpus_utils import CASES, assert_matches, flatten_outputs, graph_files, graph_text, input_sets

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
        if which == "traced" and label != "inputs" and case in TRACE_BAKES_CONTROL_FLOW:
            continue
        outputs = flatten_outputs(run(graph, *args))
        assert len(outputs) == len(expected), f"{case}/{which}/{label}: output count"
        for i, actual in enumerate(outputs):
            assert_matches(actual, expected[f"out{i}"], f"{case}/{which}/{label}/out{i}")
