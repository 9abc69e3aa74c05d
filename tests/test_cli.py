"""The command line (torchlike/cli/): ``explain``, ``run`` and ``cache`` on PyTorch-printed
corpus graphs, run in-process through ``main(argv)`` (once through a subprocess), and every
kind of bad input: one line on stderr naming what is wrong, a non-zero exit, no traceback
unless ``--debug``."""
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from corpus_utils import CORPUS, assert_matches

from torchlike.cli import main
from torchlike.cli.inputs import InputError, bind, make_values, parse_spec
from torchlike.fuser import config
from torchlike.interpreter import run as interpret
from torchlike.ir import parse_graph

ROOT = Path(__file__).resolve().parent.parent
LSTM = CORPUS / "lstm_cell"
LOOP = CORPUS / "script_for_range"      # %x.1 : Tensor, %n.1 : int
MODULE = CORPUS / "mycell_module"       # %self : __torch__...MyCell, W and b in params.npz
MUL = "graph(%x : Tensor, %y : Tensor):\n  %9 : Tensor = aten::mul(%x, %y)\n  return (%9)\n"


def cli(capsys, *argv):
    """(exit status, stdout, stderr) of ``torchlike *argv``."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def mul_graph(tmp_path):
    path = tmp_path / "mul.txt"
    path.write_text(MUL)
    return path


# -- help ------------------------------------------------------------------------------------------

def test_help_through_a_subprocess():
    done = subprocess.run([sys.executable, "-m", "torchlike", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for word in ("explain", "run", "cache", "examples:"):
        assert word in done.stdout


@pytest.mark.parametrize("command", ["explain", "run", "cache"])
def test_each_command_has_help_with_examples(capsys, command):
    code, out, _ = cli(capsys, command, "--help")
    assert code == 0
    assert f"usage: torchlike {command}" in out and "examples:" in out
    if command != "cache":
        assert "float32[64,1024]" in out and "int=3" in out and "--params" in out


# -- explain ---------------------------------------------------------------------------------------

def test_explain_prints_the_fused_graph_decisions_and_kernel(capsys):
    code, out, err = cli(capsys, "explain", LSTM / "scripted.txt", "--inputs",
                         LSTM / "inputs.npz")
    assert code == 0, err
    graph_text = out.split("fused graph:\n")[1].split("\nfusion decisions:")[0]
    fused = parse_graph(graph_text)  # the fused graph, printed as PyTorch prints one
    assert sum(1 for n in fused.all_nodes() if n.kind == "prim::FusionGroup") == 1
    assert "  prim::FusionGroup_0: fused 17 ops -> %c_new.1, %h_new.1" in out
    assert "aten::sigmoid x3" in out
    assert ("  not fused: aten::matmul(%8) at make_corpus.py:92:12: not an elementwise op"
            in out)
    assert "--- prim::FusionGroup_0: tl_fused_" in out and "@numba.njit" in out
    assert "%x.1   float32[3, 10]" in out


def test_explain_cuda_source_needs_no_gpu(capsys):
    code, out, err = cli(capsys, "explain", LOOP / "scripted.txt", "--input", "x=float32[64,1024]",
                         "n=int=3", "--backend", "cuda")
    assert code == 0, err
    assert 'extern "C" __global__' in out and "tl_sigmoid(" in out
    assert "TL_PRELUDE_CORE" not in out and "explain --full prints it" in out
    code, full, _ = cli(capsys, "explain", LOOP / "scripted.txt", "--input", "float32[8]",
                        "int=1", "--backend", "cuda", "--full")
    assert code == 0 and "TL_PRELUDE_CORE" in full


def test_explain_without_inputs_gives_decisions_but_no_kernel(capsys):
    code, out, err = cli(capsys, "explain", CORPUS / "script_if_else_chains" / "scripted.txt")
    assert code == 0, err
    assert "prim::FusionGroup_2: fused 5 ops" in out
    assert "prim::FusionGroup_0: fused 2 ops -> %6" in out  # a full mean joins its gt
    assert "not fused: aten::Bool(%8) at make_corpus.py:400:7: not an elementwise op" in out
    assert "none generated: the code depends on dtypes and shapes" in out


def test_explain_traced_graph_takes_its_inputs_from_its_types(capsys):
    code, out, err = cli(capsys, "explain", CORPUS / "gelu_tanh" / "traced.txt")
    assert code == 0, err
    assert "random (its type in the graph)" in out and "def tl_fused_" in out


def test_explain_names_a_group_the_backend_cannot_compile(capsys, monkeypatch):
    from torchlike.fuser.backend import get_backend_impl
    monkeypatch.setattr(type(get_backend_impl("cpu")), "check",
                        lambda self, spec: "unsupported op aten::made_up")
    code, out, _ = cli(capsys, "explain", LOOP / "scripted.txt", "-i", "float32[4]", "int=2")
    assert code == 0
    assert ("--- prim::FusionGroup_0: no cpu kernel (unsupported op aten::made_up): it runs in "
            "the interpreter ---") in out


# -- run -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case, which, extra", [
    ("lstm_cell", "scripted", []),
    ("script_for_range", "scripted", []),             # n: a 0-d int in the npz, an int input
    ("mycell_module", "scripted", ["--params"]),      # %self from params.npz
    ("int64_floordiv_remainder", "traced", []),
])
def test_run_reproduces_pytorch(capsys, tmp_path, case, which, extra):
    d = CORPUS / case
    params = [d / "params.npz"] if extra else []
    out_file = tmp_path / "out.npz"
    code, out, err = cli(capsys, "run", d / f"{which}.txt", "--inputs", d / "inputs.npz",
                         *extra, *params, "--output", out_file, "--repeat", 2)
    assert code == 0, err
    expected = np.load(d / "expected.npz")
    got = np.load(out_file)
    assert sorted(got.files) == sorted(expected.files)
    for k in expected.files:
        assert_matches(got[k], expected[k], f"{case}/{which}/{k}")
        assert f"{k}  {expected[k].dtype}[{', '.join(map(str, expected[k].shape))}]" in out
    assert "per call (median of 2 calls after a warm-up call" in out
    assert "fallbacks  none: every group that ran used a compiled kernel" in out


def test_run_random_inputs_are_seeded_and_scalars_given_by_spec(capsys, tmp_path):
    out_file = tmp_path / "out.npz"
    argv = ["run", LOOP / "scripted.txt", "--input", "n=int=3", "float32[4,5]", "--seed", 7,
            "--output", out_file, "--repeat", 1]
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    assert "%x.1  float32[4, 5]  random (--input float32[4,5])" in out
    assert "%n.1  int 3          (--input n=int=3)" in out
    assert "(random values from --seed 7)" in out
    graph = parse_graph((LOOP / "scripted.txt").read_text())
    values = make_values(bind(graph, [parse_spec("n=int=3"), parse_spec("float32[4,5]")], {}), 7)
    assert isinstance(values[1], int) and values[1] == 3
    np.testing.assert_allclose(np.load(out_file)["out0"], interpret(graph, *values), rtol=1e-6)


def test_run_reads_the_graph_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(MUL))
    code, out, err = cli(capsys, "run", "-", "-i", "float32[3]", "float32[2,1]", "--repeat", 1)
    assert code == 0, err
    assert out.startswith("graph      <stdin> (2 inputs, backend auto)")
    assert "out0  float32[2, 3]" in out and "1 group" in out


def test_run_reports_fallbacks_and_the_interpreter_backend(capsys, monkeypatch):
    from torchlike.fuser.backend import get_backend_impl
    code, out, _ = cli(capsys, "run", LOOP / "scripted.txt", "-i", "float32[4]", "int=2",
                       "--backend", "interpreter", "--repeat", 1)
    assert code == 0 and "fusion     1 group, interpreted (--backend interpreter)" in out
    monkeypatch.setattr(type(get_backend_impl("cpu")), "check",
                        lambda self, spec: "unsupported op aten::made_up")
    code, out, _ = cli(capsys, "run", LOOP / "scripted.txt", "-i", "float32[4]", "int=2",
                       "--repeat", 1)
    assert code == 0
    assert "fallbacks  1 group ran in the interpreter:\n             unsupported op " \
           "aten::made_up" in out
    assert config.get_backend() == "auto"  # --backend is restored afterwards


# -- cache -----------------------------------------------------------------------------------------

@pytest.fixture
def cache_dir(tmp_path):
    saved = config.cache_dir() if config._settings.cache_dir else None
    config.set_cache_dir(tmp_path)
    yield tmp_path
    config.set_cache_dir(saved)


def test_cache_info_and_clear(capsys, cache_dir):
    (cache_dir / "cpu" / "__pycache__").mkdir(parents=True)
    (cache_dir / "cpu" / "a.py").write_text("x" * 100)
    (cache_dir / "cpu" / "b.py").write_text("y" * 100)
    (cache_dir / "cpu" / "__pycache__" / "a.nbc").write_bytes(b"z" * 2048)
    (cache_dir / "cuda-emulated").mkdir()
    (cache_dir / "cuda-emulated" / "k.so").write_bytes(b"s" * 24)
    (cache_dir / "notes.txt").write_text("not ours")
    code, out, _ = cli(capsys, "cache", "info")
    assert code == 0
    assert f"location       {cache_dir} (" in out
    assert "cpu            2 kernels, 2.2 KiB" in out
    assert "cuda-emulated  1 kernel, 24 B" in out
    assert "total          3 kernels, 2.2 KiB" in out
    code, out, _ = cli(capsys, "cache", "clear")
    assert code == 0
    assert out.startswith(f"removed 3 kernels (2.2 KiB) from {cache_dir}")
    assert sorted(p.name for p in cache_dir.iterdir()) == ["notes.txt"]  # only its own dirs
    code, out, _ = cli(capsys, "cache", "info")
    assert "total     0 kernels, 0 B" in out


# -- bad input -------------------------------------------------------------------------------------

BAD_GRAPH = "graph(%x : Tensor):\n  %2 : Tensor = aten::mul(%x %1)\n  return (%2)\n"


@pytest.mark.parametrize("argv, status, message", [
    (["run", "{bad}", "-i", "float32[3]"], 1,
     "{bad}:2:30: expected ')' after node inputs, found '%1'"),
    (["run", "{mul}", "-i", "float33[2,x]", "float32[3]"], 1,
     "bad input spec 'float33[2,x]': unknown dtype 'float33' (did you mean float32?)"),
    (["run", "{mul}", "-i", "float32[2,x]", "float32[3]"], 1,
     "bad input spec 'float32[2,x]': 'x' is not a size"),
    (["explain", "{mul}", "-i", "float32[3", "float32[3]"], 1,
     "bad input spec 'float32[3': a '[' without its ']'"),
    (["run", "{mul}", "-i", "float[3]", "float32[3]"], 1,
     "bad input spec 'float[3]': 'float' is not a dtype"),
    (["run", "{mul}", "-i", "float32[3,4]", "float32[5]"], 1,
     "aten::mul(%9): ValueError: operands could not be broadcast together with shapes (3,4) "
     "(5,)"),
    (["run", "{dir}/missing.txt", "-i", "float32[3]"], 1,
     "cannot read graph {dir}/missing.txt: No such file or directory"),
    (["run", "{mul}", "--inputs", "{dir}/missing.npz"], 1,
     "cannot read --inputs {dir}/missing.npz: No such file or directory"),
    (["run", "{mul}", "--inputs", "{mul}"], 1,
     "cannot read --inputs {mul}: not an .npz file"),
    (["run", "{mul}", "-i", "float32[3]"], 1,
     "no value for %y : Tensor: give one --input per graph input"),
    (["run", "{mul}", "-i", "float32[3]", "float32[3]", "float32[3]"], 1,
     "3 unnamed --input specs, but the graph has 2 inputs (%x, %y)"),
    (["run", "{mul}", "-i", "z=float32[3]", "float32[3]"], 1,
     "--input 'z=float32[3]': the graph has no input named 'z' (its inputs: %x, %y)"),
    (["run", "{mul}", "-i", "x=float32[3]", "x=float32[3]"], 1,
     "input %x is given twice: by --input x=float32[3] and by --input x=float32[3]"),
    (["run", "{mul}", "-i", "int=3", "float32[3]"], 1,
     "input %x : Tensor takes a tensor: DTYPE[SHAPE], but --input int=3 gives an int"),
    (["run", f"{LOOP}/scripted.txt", "-i", "float32[3]", "float=0.5"], 1,
     "input %n.1 : int takes a scalar: int=VALUE, but --input float=0.5 gives a float"),
    (["run", f"{LOOP}/scripted.txt", "-i", "float32[3]", "int=x"], 1,
     "bad input spec 'int=x': 'x' is not an int"),
    (["run", f"{MODULE}/scripted.txt", "-i", "float32[3,4]", "float32[3,4]"], 1,
     "is a module: give its attributes with --params FILE.npz"),
    (["run", "{mul}", "-i", "float32[3]", "float32[3]", "--repeat", "0"], 1,
     "--repeat 0: give at least 1 call to time"),
    (["run", "-i", "float32[3]", "{mul}"], 2, "no GRAPH given"),
])
def test_bad_input_is_one_line_and_a_nonzero_exit(capsys, tmp_path, mul_graph, argv, status,
                                                   message):
    (tmp_path / "bad.txt").write_text(BAD_GRAPH)
    names = {"bad": tmp_path / "bad.txt", "mul": mul_graph, "dir": tmp_path}
    argv = [a.format(**names) for a in argv]
    code, out, err = cli(capsys, *argv)
    assert code == status
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"torchlike {argv[0]}: error: ")
    assert message.format(**names) in err, err


def test_debug_adds_the_traceback(capsys, mul_graph):
    code, _, err = cli(capsys, "run", mul_graph, "-i", "float32[3,4]", "float32[5]", "--debug")
    assert code == 1 and "Traceback (most recent call last)" in err
    assert err.rstrip().splitlines()[-1].startswith("torchlike run: error: aten::mul(%9)")


def test_a_malformed_command_line_is_argparses_usage_error(capsys):
    code, _, err = cli(capsys, "run", "--no-such-option")
    assert code == 2 and "usage: torchlike" in err


# -- input specs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, fields", [
    ("float32[64,1024]", dict(name=None, dtype="float32", shape=(64, 1024))),
    ("int64[]", dict(dtype="int64", shape=())),
    ("bool[ 2, 0 ]", dict(dtype="bool", shape=(2, 0))),
    ("x.1=float16[3]", dict(name="x.1", dtype="float16", shape=(3,))),
    ("%x=float16[3]", dict(name="x", dtype="float16")),
    ("int=3", dict(scalar_type="int", value=3)),
    ("float=-0.5", dict(scalar_type="float", value=-0.5)),
    ("bool=True", dict(scalar_type="bool", value=True)),
    ("n=int=-4", dict(name="n", scalar_type="int", value=-4)),
    ("int=float32[2]", dict(name="int", dtype="float32", shape=(2,))),
])
def test_spec_syntax(text, fields):
    spec = parse_spec(text)
    for k, v in fields.items():
        assert getattr(spec, k) == v, (k, spec)


def test_names_match_with_or_without_pytorchs_suffix():
    graph = parse_graph("graph(%x.1 : Tensor, %x.2 : Tensor, %y.1 : Tensor):\n  return (%x.1)\n")
    bound = bind(graph, [parse_spec("y=float32[1]"), parse_spec("x.2=float32[2]"),
                         parse_spec("float32[3]")], {})
    assert [b.spec.text for b in bound] == ["float32[3]", "x.2=float32[2]", "y=float32[1]"]
    with pytest.raises(InputError, match=r"'x' could be any of %x.1, %x.2: use the full name"):
        bind(graph, [parse_spec("x=float32[1]")], {})
    arrays = {"arr_2": np.zeros(2, np.float32), "x.1": np.ones(1, np.float32)}
    bound = bind(graph, [parse_spec("float32[5]")], arrays, "f.npz")
    assert [b.origin for b in bound] == ["--inputs f.npz, key x.1", "--input float32[5]",
                                         "--inputs f.npz, key arr_2"]


NESTED = """graph(%self : __torch__.M,
      %x : Tensor):
  %lin : __torch__.Lin = prim::GetAttr[name="lin"](%self)
  %w : Tensor = prim::GetAttr[name="weight"](%lin)
  %s : Tensor = prim::GetAttr[name="scale"](%self)
  %1 : Tensor = aten::mul(%x, %w)
  %2 : Tensor = aten::mul(%1, %s)
  return (%2)
"""


def test_params_reach_submodules_by_dotted_keys(capsys, tmp_path):
    graph = tmp_path / "nested.txt"
    graph.write_text(NESTED)
    w, s, x = (np.arange(1, 4, dtype=np.float32) * k for k in (1, 2, 3))
    np.savez(tmp_path / "params.npz", **{"lin.weight": w, "scale": s})
    np.savez(tmp_path / "inputs.npz", x)  # arr_0: the first argument after %self
    code, out, err = cli(capsys, "run", graph, "--params", tmp_path / "params.npz", "--inputs",
                         tmp_path / "inputs.npz", "-o", tmp_path / "out.npz", "--repeat", 1)
    assert code == 0, err
    assert "%self  module (lin, scale)" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["out0"], x * w * s)
    np.savez(tmp_path / "clash.npz", **{"lin": w, "lin.weight": w})
    code, _, err = cli(capsys, "run", graph, "--params", tmp_path / "clash.npz", "-i",
                       "float32[3]")
    assert code == 1 and "key 'lin.weight' is inside 'lin', which is an array" in err
