"""The scripting front end: Python source -> graph with control flow, checked by running it.

Every graph is run with the reference interpreter and compared with the Python function called
eagerly on numpy arrays, or with PyTorch's own answers from the corpus."""
import inspect
import linecache
import math
import re
from collections import Counter

import numpy as np
import pytest
from corpus_utils import CASES, assert_matches, flatten_outputs, graph_text, input_sets, meta
from numpy import maximum as np_maximum

import torchlike
import torchlike as tl
from torchlike import jit
from torchlike import sigmoid as tl_sigmoid
from torchlike.errors import ScriptError
from torchlike.frontend.script import script_graph
from torchlike.interpreter import run
from torchlike.ir import parse_graph
from torchlike.ir.types import INT, TENSOR
from torchlike.ir.verify import verify

RNG = np.random.default_rng(0)


def scripted(fn):
    """``script_graph(fn)``, checked to be well formed and to print and parse back."""
    graph = script_graph(fn)
    verify(graph)
    text = str(graph)
    assert str(parse_graph(text)) == text
    return graph


def kinds(graph):
    return [n.kind for n in graph.all_nodes()]


def check(fn, *args, rtol=1e-6):
    """Script ``fn``, run the graph and compare with calling ``fn`` eagerly."""
    graph = scripted(fn)
    got, want = run(graph, *args), fn(*args)
    got_flat, want_flat = flatten_outputs(got), flatten_outputs(want)
    assert len(got_flat) == len(want_flat)
    for g, w in zip(got_flat, want_flat):
        if isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)
        else:
            assert type(g) is type(w) and g == pytest.approx(w), (g, w)
    return graph


def arr(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# -- the seed examples ---------------------------------------------------------------------------
def add_one(x):
    return x + 1.0


def loop_over_helper(x):
    for _ in range(1000):
        x = add_one(x)
    return x


def test_loop_of_1000_calls_is_one_loop_with_the_helper_inlined():
    graph = check(loop_over_helper, arr(2, 3))
    assert kinds(graph).count("prim::Loop") == 1
    assert kinds(graph).count("aten::add") == 1          # the helper's body, inlined once
    loop = next(n for n in graph.nodes if n.kind == "prim::Loop")
    assert loop.inputs[0].constant_value() == 1000
    assert loop.inputs[1].constant_value() is True
    body = loop.blocks[0]
    assert [p.type for p in body.params] == [INT, TENSOR]
    assert body.returns[0] is loop.inputs[1]            # -> (%cond, %x.5)
    # The helper's node points at the helper's own line.
    add = body.nodes[0]
    line = inspect.getsourcelines(add_one)[1] + 1
    assert add.source == f"test_script.py:{line}:11"


def sign_gate(x):
    if tl.sum(x) > 0:
        return x
    else:
        return -x


def test_if_on_a_tensor_keeps_both_branches():
    graph = scripted(sign_gate)
    assert kinds(graph).count("prim::If") == 1 and "aten::Bool" in kinds(graph)
    pos = np.abs(arr(3, 4))
    np.testing.assert_array_equal(run(graph, pos), pos)
    np.testing.assert_array_equal(run(graph, -pos), pos)


def print_in_loop(x, n: int):
    for i in range(n):
        print("step", i)
        x = x * 2.0
    return x


def test_print_runs_at_run_time(capsys):
    graph = scripted(print_in_loop)
    assert "prim::Print" in kinds(graph)
    assert capsys.readouterr().out == ""                 # nothing printed while compiling
    out = run(graph, np.ones(2, np.float32), 3)
    assert capsys.readouterr().out == "step 0\nstep 1\nstep 2\n"
    np.testing.assert_array_equal(out, np.full(2, 8.0, np.float32))


# -- control flow --------------------------------------------------------------------------------
def for_start_stop_step(x, a: int, b: int, s: int):
    total = 0
    for i in range(a, b, s):
        total = total + i
        x = x + i
    return x, total


@pytest.mark.parametrize("a,b,s", [(0, 10, 1), (2, 11, 3), (10, 0, -3), (5, 5, 1), (7, 1, 2)])
def test_for_range_with_start_stop_step(a, b, s):
    graph = check(for_start_stop_step, arr(3), a, b, s)
    assert graph.inputs[1].type == INT


def while_with_break_continue(x, n: int):
    i = 0
    acc = 0.0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > 10:
            break
        acc = acc + i * 0.5
        x = x - acc
    return x, acc, i


@pytest.mark.parametrize("n", [0, 1, 5, 9, 40])
def test_while_break_continue(n):
    graph = check(while_with_break_continue, arr(4), n)
    loop = next(n for n in graph.nodes if n.kind == "prim::Loop")
    assert loop.inputs[0].constant_value() == 9223372036854775807


def first_big(x, limit: float):
    for i in range(10):
        y = x * float(i)
        if tl.sum(y) > limit:
            return y, i
    return x, -1


@pytest.mark.parametrize("limit", [-1.0, 3.0, 1e9])
def test_early_return_from_a_loop(limit):
    graph = check(first_big, np.ones(2, np.float32), limit)
    assert graph.outputs[0].type.elems == (TENSOR, INT)
    assert len([n for n in graph.all_nodes() if n.kind == "prim::TupleConstruct"]) >= 1


def nested_loops(x, n: int, m: int):
    count = 0
    for i in range(n):
        for j in range(m):
            if j > i:
                break
            count += 1
            x = x + float(i * j)
    return x, count


@pytest.mark.parametrize("n,m", [(0, 3), (3, 3), (5, 2)])
def test_nested_loops_with_break(n, m):
    graph = check(nested_loops, arr(2), n, m)
    assert kinds(graph).count("prim::Loop") == 2


def elif_chain(x, k: int):
    if k == 0:
        y = x + 1.0
    elif k == 1:
        y = x * 2.0
    elif k < 5 and k != 3:
        y = tl.tanh(x)
    else:
        y = -x
    return y


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 7])
def test_elif_chain(k):
    check(elif_chain, arr(3, 2), k)


def returns_in_branches(x, k: int):
    if k > 2:
        if k > 5:
            return x * 3.0
        x = x + 1.0
    else:
        x = x - 1.0
    if k == 4:
        return x * 10.0
    return x


@pytest.mark.parametrize("k", [0, 3, 4, 6])
def test_early_returns_from_nested_ifs(k):
    graph = check(returns_in_branches, arr(2), k)
    assert len(graph.outputs) == 1 and len([n for n in graph.nodes
                                            if n.kind == "prim::If"]) == 1


def scalar_logic(a: int, b: float, flag: bool):
    c = a // 2 + a % 3 - a * a
    d = b / 4 + b * a - (-b)
    e = (a > 1 and b < 2.0) or not flag
    f = 0 < a <= 10 != b
    g = (a & 6) | (a ^ 3)
    h = a if flag else -a
    return c, d, e, f, g, h, int(b) + 1, float(a), bool(a), math.exp(b), math.sqrt(abs(b))


@pytest.mark.parametrize("a,b,flag", [(5, 1.5, True), (0, -2.25, False), (12, 3.0, True)])
def test_scalar_arithmetic_and_logic(a, b, flag):
    graph = check(scalar_logic, a, b, flag)
    types = [str(t) for t in graph.outputs[0].type.elems]
    assert types == ["int", "float", "bool", "bool", "int", "int", "int", "float", "bool",
                     "float", "float"]


def tensor_operators(x, y, m, n):
    a = x // 2.0 + x % 1.5 - x ** 2
    b = (m & n) | (m ^ ~n)
    c = tl.where(x > y, x, y) * (x != y)
    return a, b, c, x - y if True else x


def test_tensor_operators():
    m = RNG.integers(0, 8, (3, 4)).astype(np.int32)
    n = RNG.integers(0, 8, (3, 4)).astype(np.int32)
    graph = check(tensor_operators, arr(3, 4), arr(3, 4), m, n)
    assert "aten::floor_divide" in kinds(graph) and "aten::bitwise_not" in kinds(graph)


def assign_forms(x):
    a = b = x * 2.0
    a, b = b + 1.0, a
    t = (a, b)
    u, v = t
    w: float = 0.5
    w *= 3
    pieces = tl.chunk(x * w, 2, 1)
    p, q = pieces
    return u - v, p * q


def test_assignment_forms_tuples_and_chunk():
    graph = check(assign_forms, arr(2, 4))
    assert "prim::ListUnpack" in kinds(graph) and "aten::chunk" in kinds(graph)


def calls(x, y):
    a = np.exp(x) + np.maximum(x, y)
    b = tl.clamp(x, min=-0.5, max=0.5)
    c = x.sum(1, keepdim=True) * np.sum(y, axis=0)
    d = tl.div(x, y, rounding_mode="floor")
    e = math.pi * tl.sigmoid(x) + math.cos(0.5)
    return a, b, c, d, e


def test_numpy_math_and_torchlike_calls():
    x, y = arr(3, 4), np.abs(arr(3, 4)) + 0.5
    graph = scripted(calls)
    got = flatten_outputs(run(graph, x, y))
    want = [np.exp(x) + np.maximum(x, y), np.clip(x, -0.5, 0.5),
            x.sum(1, keepdims=True) * y.sum(0), np.floor_divide(x, y),
            math.pi / (1 + np.exp(-x)) + math.cos(0.5)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    clamp = next(n for n in graph.nodes if n.kind == "aten::clamp")
    assert [v.constant_value() for v in clamp.inputs[1:]] == [-0.5, 0.5]


def imported_functions(x, y):
    return np_maximum(tl_sigmoid(x), y)


def test_functions_imported_by_name():
    graph = check(imported_functions, arr(3), arr(3))
    assert {"aten::maximum", "aten::sigmoid"} <= set(kinds(graph))


def with_assert(x, n: int):
    assert n > 0, "n must be positive"
    return x * n


def test_assert_raises_at_run_time():
    graph = scripted(with_assert)
    raise_node = next(n for n in graph.all_nodes() if n.kind == "prim::RaiseException")
    assert raise_node.inputs[0].constant_value() == "AssertionError: n must be positive"
    np.testing.assert_array_equal(run(graph, np.ones(2, np.float32), 2), [2.0, 2.0])
    with pytest.raises(Exception, match="n must be positive"):
        run(graph, np.ones(2, np.float32), 0)


class Scaler:
    factor = 3.0

    def forward(self, x):
        return x * self.factor


def test_bound_method_self_is_not_an_input():
    graph = scripted(Scaler().forward)
    assert [v.name for v in graph.inputs] == ["x"]
    np.testing.assert_array_equal(run(graph, np.ones(2, np.float32)), [3.0, 3.0])


def annotated(x: np.ndarray, n: int, s: float, b: bool):
    return x * s if b else x * float(n)


def test_annotations_and_printing():
    graph = scripted(annotated)
    assert [str(v.type) for v in graph.inputs] == ["Tensor", "int", "float", "bool"]
    text = str(graph)
    assert text.startswith("graph(%x : Tensor,\n      %n : int,")
    assert "prim::If" in text and "# test_script.py:" in text
    np.testing.assert_array_equal(run(graph, np.ones(2, np.float32), 2, 0.5, False), [2.0, 2.0])


def helper_with_default(y, k=3):
    return y * 2.0 + k


def make_scaled(scale):
    def scaled(x):
        return helper_with_default(x) * scale + helper_with_default(x, k=1)
    return scaled


def test_closure_helper_with_defaults_and_keywords():
    graph = check(make_scaled(0.25), arr(2, 2))
    assert kinds(graph).count("aten::mul") == 3       # the helper inlined twice, plus * scale


def countdown(x, n: int):
    if n <= 0:
        return x
    return countdown(x + 1.0, n - 1)


def maybe_add(x, y=None, scale=1.0):
    if y is None:
        return x * scale
    return x + y


def optional_arguments(x, y):
    pair = (maybe_add(x), maybe_add(x, y, scale=3.0))
    first = pair[0]
    return first + pair[-1] if first.sum() > 0.0 else pair[1]


def test_is_none_is_decided_while_compiling():
    graph = check(optional_arguments, arr(3), arr(3))
    assert kinds(graph).count("prim::If") == 1         # only the IfExp; `is None` was static


def reused_loop_names(x, n: int):
    j = 0
    total = 0
    while True:
        for j in range(n):
            total += j
        if total >= 6 or n == 0:
            break
        x = x + 1.0
    return x, total


@pytest.mark.parametrize("n", [0, 2, 4])
def test_while_true_with_inner_for_and_break(n):
    check(reused_loop_names, arr(2), n)


def int_pow(a: int, b: int):
    return a ** b, a / b


def test_int_pow_and_div_give_floats_as_in_torchscript():
    graph = scripted(int_pow)
    assert [str(t) for t in graph.outputs[0].type.elems] == ["float", "float"]
    assert run(graph, 2, 3) == (8.0, 2 / 3)


# -- the corpus, as PyTorch ran it -----------------------------------------------------------------
def decision_gate(x):
    if x.sum() > 0:
        return x
    else:
        return -x


def script_if_else_chains(x, y):
    if x.mean() > 0:
        out = tl.tanh(x * y + 1.0) * 0.5
    else:
        out = tl.sigmoid(x - y) * tl.relu(x + 2.0)
    return out


def script_for_range(x, n: int):
    for _ in range(n):
        x = tl.sigmoid(x * 1.1 + 0.1) * 2.0 - 0.5
    return x


def loop_add_1000(x):
    for _ in range(1000):
        x = x + 1.0
    return x


def layernorm_manual(x, gamma, beta):
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    var = (xc * xc).mean(-1, keepdim=True)
    return xc * tl.rsqrt(var + 1e-5) * gamma + beta


def mycell(x, h, W, b):
    new_h = tl.tanh(x @ W + b + h)
    return new_h, new_h


def lstm_cell(x, h, c, Wi, Wh, b):
    gates = x @ Wi + h @ Wh + b
    i, f, g, o = gates.chunk(4, 1)
    i = tl.sigmoid(i)
    f = tl.sigmoid(f)
    g = tl.tanh(g)
    o = tl.sigmoid(o)
    c_new = f * c + i * g
    h_new = o * tl.tanh(c_new)
    return h_new, c_new


REWRITTEN = {f.__name__: f for f in (decision_gate, script_if_else_chains, script_for_range,
                                     loop_add_1000, layernorm_manual, mycell, lstm_cell)}


def check_corpus(case, fn):
    graph = scripted(fn)
    for label, args, expected in input_sets(case):
        outputs = flatten_outputs(run(graph, *args))
        assert len(outputs) == len(expected), f"{case}/{label}"
        for i, actual in enumerate(outputs):
            assert_matches(actual, expected[f"out{i}"], f"{case}/scripted/{label}/out{i}")
    return graph


@pytest.mark.parametrize("name", sorted(REWRITTEN))
def test_rewritten_corpus_functions_match_pytorch(name):
    graph = check_corpus(name, REWRITTEN[name])
    expected_kinds = {"decision_gate": "prim::If", "script_if_else_chains": "prim::If",
                      "script_for_range": "prim::Loop", "loop_add_1000": "prim::Loop"}
    if name in expected_kinds:
        assert expected_kinds[name] in kinds(graph)


def corpus_function(case):
    """The case's own source, compiled with ``torch`` bound to torchlike (same op names)."""
    m = meta(case)
    filename = f"corpus_{case}.py"
    source = m["source"]
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torchlike}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[m["function"]]


FUNCTION_CASES = [c for c in CASES if c != "mycell_module"]


@pytest.mark.parametrize("case", FUNCTION_CASES)
def test_every_corpus_source_scripts_and_matches_pytorch(case):
    check_corpus(case, corpus_function(case))


@pytest.mark.parametrize("case", FUNCTION_CASES)
def test_scripted_ops_are_the_ones_pytorch_scripted(case):
    """The same ops, If and Loop nodes as torch.jit.script's graph (constants aside)."""
    def ops(graph):
        return Counter(n.kind for n in graph.all_nodes()
                       if n.kind not in ("prim::Constant", "prim::ListConstruct"))
    ours = scripted(corpus_function(case))
    assert ops(ours) == ops(parse_graph(graph_text(case, "scripted")))


def test_source_comments_point_into_the_file():
    graph = scripted(script_for_range)
    first = inspect.getsourcelines(script_for_range)[1]
    loop = next(n for n in graph.nodes if n.kind == "prim::Loop")
    assert loop.source == f"test_script.py:{first + 1}:4"
    sigmoid = next(n for n in loop.blocks[0].nodes if n.kind == "aten::sigmoid")
    assert sigmoid.source == f"test_script.py:{first + 2}:12"


# -- errors ----------------------------------------------------------------------------------------
def uses_comprehension(xs):
    ys = [y * 2 for y in xs]
    return ys


def uses_with(x):
    with open("f") as f:  # noqa: F841 - scripting this must fail on the `with`
        x = x + 1.0
    return x


def for_over_tuple(x):
    for y in (x, x):
        x = x + y
    return x


def while_else(x):
    while False:
        pass
    else:
        x = x + 1.0
    return x


def one_branch_only(x, k: int):
    if k > 0:
        y = x
    return y


def unknown_name(x):
    return x + not_defined_anywhere  # noqa: F821


def loop_local_used_after(x, n: int):
    for i in range(n):
        last = x * float(i)
    return last


def conditional_types_differ(x, k: int):
    y = 1 if k > 0 else 2.5
    return x * y


def lambda_inside(x):
    f = lambda v: v + 1  # noqa: E731
    return f(x)


def type_changes_in_loop(x, n: int):
    acc = 0
    for i in range(n):  # noqa: B007 - the scripted loop's own variable
        acc = acc + 0.5
    return x * acc


def attribute_store(x):
    x.foo = 1
    return x


def star_args(x):
    return tl.add(*x)


def unknown_op(x):
    return tl.definitely_not_an_op(x)


def nested_indented():
    def inner(x):
        return [v for v in x]
    return inner


ERROR_CASES = [
    (uses_comprehension, "list comprehensions are not supported", "[y * 2"),
    (uses_with, "with statements are not supported", "with open"),
    (for_over_tuple, "only supported over range", "(x, x)"),
    (while_else, "while-else is not supported", "while False"),
    (one_branch_only, "'y' is not defined in the false branch", "y\n"),
    (unknown_name, "undefined name 'not_defined_anywhere'", "not_defined_anywhere"),
    (lambda_inside, "lambdas are not supported", "lambda"),
    (loop_local_used_after, "'last' is assigned inside the loop", "last\n"),
    (conditional_types_differ, "different types (int and float)", "1 if k"),
    (type_changes_in_loop, "'acc' has type int before the loop and float", "for i"),
    (attribute_store, "attribute assignment is not supported", "x.foo"),
    (star_args, "starred arguments", "*x"),
    (unknown_op, "definitely_not_an_op has no op", "tl.definitely"),
    (countdown, "recursive call of 'countdown'", "countdown(x + 1.0"),
    (nested_indented(), "list comprehensions are not supported", "[v for"),
]


@pytest.mark.parametrize("fn,message,marker", ERROR_CASES, ids=[c[0].__name__ for c in ERROR_CASES])
def test_script_errors_quote_the_line_with_a_caret(fn, message, marker):
    with pytest.raises(ScriptError) as info:
        script_graph(fn)
    text = str(info.value)
    assert message in text
    lines, first = inspect.getsourcelines(fn)
    # The line holding the construct (the last match: 'return y' for one_branch_only).
    hits = [i for i, ln in enumerate(lines) if marker in ln + "\n"
            and (not marker.endswith("\n") or "return" in ln)]
    index = hits[-1]
    line = lines[index].rstrip("\n")
    path = inspect.getsourcefile(fn)
    assert f'File "{path}", line {first + index}\n' in text
    quoted, caret = text.splitlines()[-2:]
    assert quoted.strip() == line.strip()
    assert caret.strip() == "^"
    column = caret.index("^")
    assert quoted[column:].startswith(marker.rstrip("\n")), (quoted, caret)


def test_script_error_is_a_syntax_error_subclass_naming_the_file():
    with pytest.raises(SyntaxError, match="test_script.py"):
        script_graph(uses_comprehension)


def _var_unbiased_kw(x):
    return x.var(-1, keepdim=True, unbiased=False) + x.std(0, unbiased=True).sum()


def test_var_std_take_pytorchs_unbiased_keyword():
    """``unbiased=`` (var/std's bool overload) lands where ``correction`` does, as PyTorch's
    graph has it: a bool there is a correction of 0 or 1."""
    x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    f = jit.script(_var_unbiased_kw)
    assert "aten::var(%x, %" in str(f.graph) and "unbiased" not in str(f.graph)
    want = x.var(-1, keepdims=True) + x.std(0, ddof=1).sum()
    np.testing.assert_allclose(f(x), want, rtol=1e-5)
    np.testing.assert_allclose(jit.trace(_var_unbiased_kw, (x,))(x), want, rtol=1e-5)


def _max_dim_pair(x):
    v, i = tl.max(x, -1)
    lo, j = x.min(0, keepdim=True)
    return v + lo.sum(), i + j.sum(), tl.max(x), tl.max(x, x * 2.0)


def test_max_min_with_a_dim_give_values_and_indices():
    """``max(x, dim)`` is max.dim: two results (values, indices), unpacked as in PyTorch;
    ``max(x)`` and ``max(x, other)`` stay one."""
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    f = jit.script(_max_dim_pair)
    assert re.search(r"%v : Tensor, %i : \w+ = aten::max\(%x", str(f.graph)), str(f.graph)
    want = (x.max(-1) + x.min(0, keepdims=True).sum(), x.argmax(-1) + x.argmin(0).sum(),
            x.max(), np.maximum(x, x * np.float32(2.0)))
    for got, w in zip(f(x), want, strict=True):
        if w.dtype.kind == "f":  # a float32 sum of six: numpy's order depends on its SIMD path
            np.testing.assert_allclose(got, w, rtol=1e-6)
            assert got.dtype == w.dtype
        else:
            np.testing.assert_array_equal(got, w)


def _list_literal_by_loop_index(x, n: int):
    t = 0
    for d in range(3):
        t = t + [1, 2, 4][d]
    s = [3, 5]
    return x * t + s[n]


def test_a_list_literal_indexed_by_a_variable():
    """``[1, 2, 4][d]`` with ``d`` a loop variable, ``s[n]`` with ``n`` an argument: the list
    becomes a value and ``aten::__getitem__`` reads it (a saved nn.ConvTranspose2d's
    ``_output_padding`` does this with the ``stride`` list it is called with)."""
    f = jit.script(_list_literal_by_loop_index)
    assert "aten::__getitem__" in str(f.graph)
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(f(x, 1), x * 7 + 5)
    np.testing.assert_array_equal(f(x, -2), x * 7 + 3)


NORM_CALLS = """
import torchlike as tl


def f(a):
    return (a.norm(dim=-1), a.norm(p=1, dim=1, keepdim=True), tl.norm(a, dim=(0, 1)),
            a.norm(2, -1), a.norm())
"""


def test_norm_keywords_trace_and_script(torch, tmp_path):
    """``x.norm(dim=-1)`` and ``torch.norm(x, dim=...)``: aten::norm has overloads (no one
    schema), so keywords bind by its Python signature (p, dim, keepdim, dtype).  Scripted,
    the keywords were dropped: tl.norm(a, dim=-1) was the norm of every element."""
    from graph_modes import check_torch, program_module
    f = program_module(tmp_path, "norm_calls", NORM_CALLS).f
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    t = torch.from_numpy(x)
    want = (t.norm(dim=-1), t.norm(p=1, dim=1, keepdim=True), torch.norm(t, dim=(0, 1)),
            t.norm(2, -1), t.norm())
    check_torch(jit.trace(f, (x,))(x), want)
    check_torch(jit.script(f)(x), want)
