"""Graphs of programs that call ``torch.nn.functional``: ``prim::CallFunction`` of ``F.relu`` & co.

* Function constants resolve lazily: a dead one with an unknown name is no error; calling an
  unknown function is, naming the node and the function (interpreted, fused, ScriptFunction).
* The function table holds PyTorch's graphs of the ``F`` functions (``ops/nn_functions.py``),
  and ``passes.inline_functions`` inlines their calls: ``F.relu6(F.silu(x)) + 1`` is ONE group.
* Stored graphs (tests/nn_functional/, written by ``nn_functional_programs.write_stored_cases``):
  the scripted and PyTorch-inlined graphs of each program, run interpreted, fused
  (``jit.fuse`` + ``jit.run``), fused strictly (a kernel ran, no fallback) and through a
  ``ScriptFunction``, against eager PyTorch's stored outputs -- no torch needed.
* With torch: the same programs scripted now, their printed graphs parsed and run the same
  ways against eager PyTorch on fresh inputs, and the package's table compared with what
  PyTorch prints for each ``F`` function.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from differential import assert_same, fuser_settings, subgraph
from nn_functional_programs import (
    PROGRAMS,
    eager,
    inputs,
    scripted_texts,
    stored,
    stored_cases,
    trim_paths,
)

from torchlike import jit
from torchlike.errors import ExecutionError, UnsupportedOpError
from torchlike.fuser.stats import reset_stats, stats
from torchlike.interpreter import run as interpret
from torchlike.ir import parse_graph
from torchlike.jit import ScriptFunction
from torchlike.ops.functions import FunctionRef, lookup_function
from torchlike.ops.nn_functions import NN_FUNCTIONS, nn_function_graphs
from torchlike.passes import inline_functions

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")]

CALL = "prim::CallFunction"


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def _kinds(graph):
    return [n.kind for n in graph.all_nodes()]


def _groups(graph):
    return [n for n in graph.all_nodes() if n.kind == "prim::FusionGroup"]


# -- function constants and unknown callees -------------------------------------------------------

DEAD_CONSTANT = """graph(%x.1 : Tensor):
  %3 : Function = prim::Constant[name="no_such_function"]()
  %4 : float = prim::Constant[value=2.]()
  %5 : Tensor = aten::mul(%x.1, %4)
  %6 : Tensor = aten::exp(%5)
  return (%6)
"""

UNKNOWN_CALLEE = """graph(%x.1 : Tensor):
  %3 : Function = prim::Constant[name="no_such_function"]()
  %2 : bool = prim::Constant[value=0]()
  %a.1 : Tensor = prim::CallFunction(%3, %x.1, %2) # f.py:3:8
  return (%a.1)
"""


def test_dead_function_constant_with_an_unknown_name_runs():
    graph = parse_graph(DEAD_CONSTANT)
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    want = np.exp(x * 2)
    assert_same([interpret(graph, x)], [want])
    with fuser_settings("cpu", strict=True):
        assert_same([jit.run(jit.fuse(graph), x)], [want])
        assert_same([ScriptFunction(graph)(x)], [want])
    # the constant evaluates to a reference, resolved only when called
    from torchlike.interpreter import Interpreter
    assert Interpreter(graph).run_node(graph.nodes[0], {}, np) == FunctionRef("no_such_function")


@pytest.mark.parametrize("how", ["interpreted", "fused", "script_function"])
def test_calling_an_unknown_function_names_the_node_and_the_function(how):
    graph = parse_graph(UNKNOWN_CALLEE)
    x = np.ones(3, np.float32)
    run = {"interpreted": lambda: interpret(graph, x),
           "fused": lambda: jit.run(jit.fuse(graph), x),
           "script_function": lambda: ScriptFunction(graph)(x)}[how]
    with pytest.raises(UnsupportedOpError) as info:
        run()
    message = str(info.value)
    assert message.startswith("prim::CallFunction(%a.1) at f.py:3:8: "), message
    assert "unknown function 'no_such_function'" in message


def test_unknown_callee_is_left_in_place_by_the_inliner():
    graph = inline_functions(parse_graph(UNKNOWN_CALLEE))
    assert _kinds(graph).count(CALL) == 1


# -- the table and the inliner --------------------------------------------------------------------

def test_table_registers_every_nn_function_as_a_graph():
    graphs = nn_function_graphs()
    names = {"threshold": "_threshold"}  # F.threshold scripts under its Python name
    for attr in NN_FUNCTIONS:
        name = names.get(attr, attr)
        assert name in graphs, name
        assert str(lookup_function(name)) == str(graphs[name])
        assert str(parse_graph(str(graphs[name]))) == str(graphs[name])  # prints back


def test_relu6_silu_plus_one_is_one_fusion_group():
    texts, values, expected = stored("relu6_silu_plus_one")
    graph = parse_graph(texts["scripted"])
    inlined = inline_functions(parse_graph(texts["scripted"]))
    assert [n.kind for n in inlined.nodes if n.kind != "prim::Constant"] == \
        ["aten::silu", "aten::relu6", "aten::add"]
    fused = jit.fuse(graph)
    (group,) = _groups(fused)
    assert [n.kind for n in fused.nodes] == ["prim::FusionGroup"]
    assert [n.kind for n in subgraph(group).nodes if n.kind != "prim::Constant"] == \
        ["aten::silu", "aten::relu6", "aten::add"]
    assert CALL in _kinds(graph)  # fuse() works on a copy


def test_inlined_nested_calls_fold_their_branches():
    """softmax's body calls _get_softmax_dim only when dim is None: with a constant dim the
    call folds away before it is inlined; with dim=None it is inlined (and warns at run time)."""
    text = """graph(%x.1 : Tensor):
  %f : Function = prim::Constant[name="softmax"]()
  %dim : int = prim::Constant[value=-1]()
  %none : NoneType = prim::Constant()
  %three : int = prim::Constant[value=3]()
  %a : Tensor = prim::CallFunction(%f, %x.1, %dim, %three, %none)
  %b : Tensor = prim::CallFunction(%f, %x.1, %none, %three, %none)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
  return (%t)
"""
    graph = inline_functions(parse_graph(text))
    kinds = _kinds(graph)
    assert CALL not in kinds and kinds.count("aten::softmax") == 2
    assert kinds.count("aten::warn") == 1 and "prim::RaiseException" not in kinds
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        a, b = interpret(graph, x)
    e = np.exp(x - x.max(-1, keepdims=True))
    assert_same([a, b], [e / e.sum(-1, keepdims=True)] * 2)


def test_callee_returning_several_values_packs_a_tuple():
    from torchlike.ops.functions import register_function, unregister_function
    register_function("test_nn_two", parse_graph("""graph(%a : Tensor):
  %b : Tensor = aten::neg(%a)
  return (%a, %b)
"""))
    try:
        graph = inline_functions(parse_graph("""graph(%x : Tensor):
  %f : Function = prim::Constant[name="test_nn_two"]()
  %t : (Tensor, Tensor) = prim::CallFunction(%f, %x)
  %u : Tensor, %v : Tensor = prim::TupleUnpack(%t)
  %one : int = prim::Constant[value=1]()
  %w : Tensor = aten::sub(%u, %v, %one)
  return (%w)
"""))
    finally:
        unregister_function("test_nn_two")
    assert CALL not in _kinds(graph)
    x = np.arange(4, dtype=np.float32)
    assert_same([interpret(graph, x)], [x * 2])


def test_batch_norm_training_checks_the_batch_through_its_helper():
    """F.batch_norm's body calls F._verify_batch_size in training mode (a second inlining
    round); its prim::RaiseException names the check and the source line."""
    graph = parse_graph("""graph(%x : Tensor):
  %f : Function = prim::Constant[name="batch_norm"]()
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %m : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %y : Tensor = prim::CallFunction(%f, %x, %none, %none, %none, %none, %true, %m, %eps)
  return (%y)
""")
    inlined = inline_functions(graph.copy())
    assert CALL not in _kinds(inlined) and "prim::Loop" in _kinds(inlined)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same([interpret(inlined, x)], [np.repeat([[-1.0], [1.0]], 3, 1).astype(np.float32)
                                          * np.float32(1 / np.sqrt(1 + 1e-5 / 2.25))])
    for g in (graph, inlined):
        with pytest.raises(ExecutionError, match="functional.py:2854:8: ValueError: Expected "
                           "more than 1 value per channel when training, got input size"):
            interpret(g, np.ones((1, 3), np.float32))


@pytest.mark.parametrize("how", ["interpreted", "fused", "script_function"])
def test_training_mode_dropout_is_refused_naming_the_call(how):
    graph = parse_graph("""graph(%x.1 : Tensor):
  %f : Function = prim::Constant[name="dropout"]()
  %p : float = prim::Constant[value=0.5]()
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = prim::CallFunction(%f, %x.1, %p, %true, %false) # g.py:2:4
  %z : Tensor = aten::exp(%y)
  return (%z)
""")
    x = np.ones(3, np.float32)
    run = {"interpreted": lambda: interpret(graph, x),
           "fused": lambda: jit.run(jit.fuse(graph), x),
           "script_function": lambda: ScriptFunction(graph)(x)}[how]
    with pytest.raises(UnsupportedOpError, match=r"aten::dropout\(.*training-mode dropout"):
        run()
    assert "aten::dropout" in _kinds(jit.fuse(graph))  # left out of any group


# -- running the graphs ----------------------------------------------------------------------------

def _run_every_way(graph_text, values, expected, label, must_fuse=True):
    """Interpreted, fused, fused strictly (a kernel ran, no fallback), and as a ScriptFunction
    (strictly), each against ``expected``."""
    graph = parse_graph(graph_text)
    assert str(parse_graph(str(graph))) == str(graph)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert_same(_outputs(interpret(graph, *values)), expected, f"{label} interpreted")
        fused = jit.fuse(graph)
        assert CALL not in _kinds(fused), f"{label}: a call was not inlined"
        if must_fuse:
            assert _groups(fused), f"{label}: nothing fused"
        with fuser_settings("cpu", strict=False):
            assert_same(_outputs(jit.run(fused, *values)), expected, f"{label} fused")
        with fuser_settings("cpu", strict=True):
            reset_stats()
            got = jit.run(fused, *values)
            s = stats()
            assert_same(_outputs(got), expected, f"{label} fused strict")
            assert s["fallbacks"] == {}, s
            # a kernel per group that ran (a branch not taken runs none of its groups)
            assert s["cache_hits"] + s["cache_misses"] >= 1 and _groups(fused), s
            reset_stats()
            fn = ScriptFunction(graph)
            assert_same(_outputs(fn(*values)), expected, f"{label} script function")
            s = stats()
            assert s["fallbacks"] == {} and s["cache_hits"] + s["cache_misses"] >= 1, s
            assert CALL not in _kinds(fn.graph_for(*values))


STORED = [(case, which) for case in stored_cases() for which in ("scripted", "inlined")]


def test_stored_cases_cover_every_program():
    assert sorted(stored_cases()) == sorted(PROGRAMS)


@pytest.mark.parametrize("case,which", STORED)
def test_stored_graph_matches_pytorch(case, which):
    texts, values, expected = stored(case)
    _run_every_way(texts[which], values, expected, f"{case}/{which}")


# -- with torch: programs scripted now -------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_scripted_program_matches_pytorch(torch, case):
    texts = scripted_texts(case)
    for seed in (1, 2):
        values = inputs(case, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            expected = eager(case, values)
        for which, text in texts.items():
            _run_every_way(text, values, expected, f"{case}/{which}/seed {seed}")


def test_stored_texts_are_what_pytorch_prints(torch):
    """The stored graphs and the package's table are PyTorch's (for the version that wrote
    them: line numbers in source comments change between versions)."""
    from torchlike.ops.nn_functions import generate_texts, read_data_file
    version, texts = read_data_file()
    if torch.__version__ != version:
        pytest.skip(f"the table was printed by torch {version}, this is {torch.__version__}")
    # aten::warn's warn_id counts the warnings TorchScript has compiled in this process so far
    # (a test that scripted F.upsample shifts them); it is not part of the function
    unnumbered = lambda text: re.sub(r"warn_id=\d+", "warn_id=N", text)  # noqa: E731
    now = generate_texts(torch)
    assert {k: unnumbered(v) for k, v in now.items()} == {k: unnumbered(v)
                                                          for k, v in texts.items()}
    for case in sorted(PROGRAMS):
        texts = scripted_texts(case)
        stored_texts = stored(case)[0]
        for which in texts:
            assert unnumbered(trim_paths(texts[which])) == unnumbered(stored_texts[which]), \
                (case, which)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_normalization_ops_match_pytorch(torch, dtype):
    """aten::glu, aten::layer_norm, aten::batch_norm (eval and training, running statistics
    updated in place) against PyTorch, special values included; integers refused by both."""
    from torchlike.ops import get
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 6, 5)) * 3).astype(dtype)
    if dtype != "int32":
        x[0, 0, :3] = [np.nan, np.inf, -0.0]
    pdt = "float32" if dtype in ("float16", "int32") else dtype  # parameters' dtype
    c = [rng.standard_normal(6).astype(pdt) for _ in range(3)] + [(rng.random(6) + 0.5).astype(pdt)]
    lw, lb = (rng.standard_normal(5).astype(dtype) for _ in range(2))
    t = torch.from_numpy
    cases = [
        ("aten::glu", [x, 1], lambda: torch.nn.functional.glu(t(x), 1)),
        ("aten::layer_norm", [x, [5], lw, lb, 1e-5, True],
         lambda: torch.nn.functional.layer_norm(t(x), [5], t(lw), t(lb))),
        ("aten::batch_norm", [x, c[0], c[1], c[2].copy(), c[3].copy(), False, 0.1, 1e-5, True],
         lambda: torch.nn.functional.batch_norm(t(x), t(c[2].copy()), t(c[3].copy()), t(c[0]),
                                                t(c[1]), False)),
    ]
    for name, args, theirs in cases:
        if dtype == "int32":
            with pytest.raises((NotImplementedError, RuntimeError)):
                theirs()
            with pytest.raises(NotImplementedError):
                get(name).impl(np, *args)
            continue
        assert_same([get(name).impl(np, *args)], [theirs().numpy()], name)
    if dtype in ("float32", "float64"):  # training mode: batch statistics, running stats move
        rm, rv = c[2].copy(), c[3].copy()
        trm, trv = t(c[2].copy()), t(c[3].copy())
        got = get("aten::batch_norm").impl(np, x, c[0], c[1], rm, rv, True, 0.1, 1e-5, True)
        want = torch.nn.functional.batch_norm(t(x), trm, trv, t(c[0]), t(c[1]), True)
        assert_same([got, rm, rv], [want.numpy(), trm.numpy(), trv.numpy()], "training")
    with pytest.raises(RuntimeError, match="mixed dtype"):  # float64 parameters: refused
        get("aten::layer_norm").impl(np, x.astype(np.float32), [5], lw.astype(np.float64))


# -- shifts and integer rounding from Python syntax -------------------------------------------------

def _shifts(a, b):
    return (a << b) + (a >> 2), 3 << a


@pytest.mark.parametrize("capture", ["trace", "script"])
def test_shift_syntax_records_the_shift_ops(capture):
    """``<<``/``>>`` record aten::__lshift__/__rshift__ (traced and scripted), with PyTorch's
    rule for counts outside [0, 32) on int32 (values checked with torch 2.13)."""
    a = np.array([[1, -5, 100, 7]], np.int32)
    b = np.array([[1, 40, -1, 3]], np.int32)
    fn = jit.trace(_shifts, (a, b)) if capture == "trace" else jit.script(_shifts)
    kinds = _kinds(fn.graph)
    assert "aten::__lshift__" in kinds and "aten::__rshift__" in kinds
    with fuser_settings("cpu", strict=True):
        got = fn(a, b)
    assert_same(list(got), [np.array([[2, -2, 25, 57]], np.int32),
                            np.array([[6, 0, 0, 384]], np.int32)])
