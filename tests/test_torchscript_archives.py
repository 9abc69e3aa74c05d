"""``torchlike.jit.load`` of TorchScript archives saved by PyTorch (``torch.jit.save``), without
PyTorch: outputs against PyTorch's, the committed fixtures (``tests/torchscript_archives/``,
written by its ``make_fixtures.py``) in a process where torch cannot be imported, and bad
archives (a malicious pickle, an op torchlike lacks, a truncated file, a newer version)."""
from __future__ import annotations

import functools
import importlib.util
import io
import os
import pickletools
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from torchlike import jit
from torchlike.errors import UnsupportedOpError
from torchlike.jit import ScriptFunction, ScriptModule, SerializationError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "torchscript_archives")
FIXTURE_NAMES = ("cell", "wraprnn", "lstm", "sequential", "loop_function", "tied",
                 "elementwise")
ROOT = os.path.dirname(HERE)


def fixture(name: str) -> str:
    return os.path.join(FIXTURES, f"{name}.pt")


def fixture_io(name: str):
    """(arguments, expected outputs flattened) of a fixture (make_fixtures.py's layout)."""
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    args: dict = {}
    for key in sorted(k for k in data.files if k.startswith("a")):
        value = data[key]
        if value.ndim == 0 and value.dtype.kind == "i":
            value = int(value)
        parts = [int(p) for p in key[1:].split("_")]
        slot = args
        for p in parts[:-1]:
            slot = slot.setdefault(p, {})
        slot[parts[-1]] = value

    def build(d):
        return tuple(build(d[i]) if isinstance(d[i], dict) else d[i] for i in sorted(d))

    outputs = [data[f"o{i}"] for i in range(sum(k.startswith("o") for k in data.files))]
    return build(args), outputs


def flatten(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in flatten(o)]
    return [np.asarray(out)]


def rewrite(path: str, changes: dict, drop=()) -> bytes:
    """The archive at ``path`` with some members replaced (name suffix -> bytes)."""
    src = zipfile.ZipFile(path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            if any(info.filename.endswith(d) for d in drop):
                continue
            data = src.read(info.filename)
            for suffix, new in changes.items():
                if info.filename.endswith(suffix):
                    data = new(data) if callable(new) else new
            out.writestr(info.filename, data)
    return buf.getvalue()


# -- committed fixtures: no torch needed ---------------------------------------------------------
@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_matches_pytorch_outputs(name):
    loaded = jit.load(fixture(name))
    assert isinstance(loaded, ScriptFunction if name == "loop_function" else ScriptModule)
    args, expected = fixture_io(name)
    got = flatten(loaded(*args))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_loaded_module_behaves_like_a_scripted_one(tmp_path):
    cell = jit.load(fixture("cell"))
    assert cell.original_name == "MyCell"
    assert cell.code.startswith("def forward(self")
    assert "(linear).forward(x, )" in cell.code
    kinds = [n.kind for n in cell.graph.block.nodes]
    assert kinds.count("prim::CallMethod") == 2
    assert sorted(cell.state_dict()) == ["linear.bias", "linear.weight"]
    assert cell.linear.weight.dtype == np.float32 and cell.linear.weight.shape == (4, 4)
    args, expected = fixture_io("cell")
    cell.save(tmp_path / "cell.tlk")  # torchlike's own format
    again = jit.load(tmp_path / "cell.tlk")
    np.testing.assert_allclose(again(*args)[0], expected[0], rtol=1e-5, atol=1e-6)
    seq = jit.load(fixture("sequential"))
    assert 'getattr(self, "0")' in seq.code or "(_0).forward" in seq.code
    assert list(seq._modules) == [str(i) for i in range(8)]
    x = fixture_io("sequential")[0][0]
    assert "prim::FusionGroup" in str(seq.graph_for(x))


def test_elementwise_module_runs_compiled_kernels():
    m = jit.load(fixture("elementwise"))
    args, expected = fixture_io("elementwise")
    jit.reset_stats()
    out = m(*args)
    np.testing.assert_allclose(out, expected[0], rtol=1e-5, atol=1e-6)
    graph = m.graph_for(*args)
    groups = [n for n in graph.all_nodes() if n.kind == "prim::FusionGroup"]
    assert len(groups) == 1
    s = jit.stats()
    assert s["cache_hits"] + s["cache_misses"] > 0 and not s["fallbacks"], s


def test_shared_storages_stay_shared_and_views_keep_their_layout():
    m = jit.load(fixture("tied"))
    assert m.a.weight is m.b.weight or np.shares_memory(m.a.weight, m.b.weight)
    v = m.v
    assert v.shape == (1, 4) and v.strides == (32, 8)
    np.testing.assert_array_equal(v, np.arange(40.0, dtype=np.float32).reshape(5, 8)[2:3, 1::2])
    m.a.weight[...] = 0.0  # parameters are live: both linears see it
    assert not m.b.weight.any()


def test_loading_never_imports_torch(tmp_path):
    (tmp_path / "torch.py").write_text("raise ImportError('torch is not installed here')\n")
    script = (
        "import sys, numpy as np\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from torchlike import jit\n"
        f"sys.path.insert(0, {HERE!r})\n"
        "from test_torchscript_archives import FIXTURE_NAMES, fixture, fixture_io, flatten\n"
        "for name in FIXTURE_NAMES:\n"
        "    args, expected = fixture_io(name)\n"
        "    got = flatten(jit.load(fixture(name))(*args))\n"
        "    for g, e in zip(got, expected):\n"
        "        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)\n"
        "try:\n"
        "    import torch\n"
        "except ImportError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('torch imported')\n"
        "assert 'torch' not in sys.modules or sys.modules['torch'] is None\n"
        "print('ok', len(FIXTURE_NAMES))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == f"ok {len(FIXTURE_NAMES)}"


def _evil_pickle(module: str, name: str, arg: str) -> bytes:
    """A protocol-2 pickle calling ``module.name(arg)``, as a hostile archive would hold."""
    text = arg.encode()
    return (b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"X"
            + len(text).to_bytes(4, "little") + text + b"\x85R.")


@pytest.mark.parametrize("what", ["os.system", "builtins.exec"])
def test_malicious_pickle_is_refused_before_anything_runs(tmp_path, what):
    marker = tmp_path / "pwned"
    if what == "os.system":
        payload = _evil_pickle("os", "system", f"touch {marker}")
    else:
        payload = _evil_pickle("builtins", "exec", f"open({str(marker)!r}, 'w').close()")
    ops = [(op.name, arg) for op, arg, _ in pickletools.genops(payload)]
    assert ("GLOBAL", what.replace(".", " ")) in ops and ("REDUCE", None) in ops
    path = tmp_path / "evil.pt"
    path.write_bytes(rewrite(fixture("cell"), {"/data.pkl": payload}))
    with pytest.raises(SerializationError, match=what.replace(".", r"\.")):
        jit.load(path)
    assert not marker.exists()
    # the same in constants.pkl, read before data.pkl: refused too
    path.write_bytes(rewrite(fixture("cell"), {"/constants.pkl": payload}))
    with pytest.raises(SerializationError, match="refusing"):
        jit.load(path)
    assert not marker.exists()


def test_an_op_torchlike_lacks_is_named_with_its_line(tmp_path):
    """The archive loads (PyTorch's modules carry branches a call never takes, with ops
    torchlike lacks); a call that reaches the op raises UnsupportedOpError naming the op and
    its source line (the module's own, which the archive records)."""
    def swap(code: bytes) -> bytes:
        return code.replace(b"g0 = torch.tanh(g)", b"g0 = torch.fft_rfft(g)")

    path = tmp_path / "lstm_op.pt"
    path.write_bytes(rewrite(fixture("lstm"), {"code/__torch__/models.py": swap}))
    module = jit.load(path)
    args, _ = fixture_io("lstm")
    with pytest.raises(UnsupportedOpError) as info:
        module(*args)
    message = str(info.value)
    assert "aten::fft_rfft" in message and "no entry in torchlike's registry" in message
    assert " at models.py:" in message  # the module's own source line, from the archive


def test_truncated_and_damaged_archives_are_clear_errors(tmp_path):
    data = open(fixture("lstm"), "rb").read()
    for cut in (len(data) // 2, len(data) - 30, 100):
        p = tmp_path / f"cut{cut}.pt"
        p.write_bytes(data[:cut])
        with pytest.raises(SerializationError):
            jit.load(p)
    p = tmp_path / "short_storage.pt"
    p.write_bytes(rewrite(fixture("lstm"), {"/data/0": lambda b: b[:-8]}))
    with pytest.raises(SerializationError, match="data/0"):
        jit.load(p)
    p = tmp_path / "no_storage.pt"
    p.write_bytes(rewrite(fixture("lstm"), {}, drop=("/data/1",)))
    with pytest.raises(SerializationError, match="missing"):
        jit.load(p)
    p = tmp_path / "bad_pickle.pt"
    p.write_bytes(rewrite(fixture("lstm"), {"/data.pkl": lambda b: b[: len(b) // 2]}))
    with pytest.raises(SerializationError, match="data.pkl"):
        jit.load(p)


def test_version_records(tmp_path):
    p = tmp_path / "new.pt"
    p.write_bytes(rewrite(fixture("cell"), {"cell/version": b"11\n"}))
    with pytest.raises(SerializationError, match="version 11 is newer"):
        jit.load(p)
    for old in (b"1", b"3", b"10"):  # every version PyTorch 1.x-2.13 writes
        p.write_bytes(rewrite(fixture("cell"), {"cell/version": old}))
        assert isinstance(jit.load(p), ScriptModule)
    p.write_bytes(rewrite(fixture("cell"), {}, drop=("cell/version",)))
    with pytest.raises(SerializationError, match="no version record"):
        jit.load(p)


def test_big_endian_storages(tmp_path):
    def swap(raw: bytes) -> bytes:
        return np.frombuffer(raw, "<f4").astype(">f4").tobytes()

    changes = {f"lstm/data/{i}": swap for i in range(4)}
    changes["lstm/byteorder"] = b"big"
    p = tmp_path / "big.pt"
    p.write_bytes(rewrite(fixture("lstm"), changes))
    m = jit.load(p)
    assert m.w_ih.dtype.isnative
    args, expected = fixture_io("lstm")
    for g, e in zip(flatten(m(*args)), expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_pytorch_1_0_archives_are_refused_clearly(tmp_path):
    p = tmp_path / "old.pt"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("old/model.json", "{}")
        z.writestr("old/version", "1")
        z.writestr("old/code/old.py", "")
    with pytest.raises(SerializationError, match="PyTorch 1.0-1.2"):
        jit.load(p)


# -- with PyTorch: archives made now, outputs compared ------------------------------------------
@functools.lru_cache(maxsize=None)
def _models():
    """tests/torchscript_archives/models.py (it imports torch), loaded once."""
    name = "torchscript_archive_models"
    spec = importlib.util.spec_from_file_location(name, os.path.join(FIXTURES, "models.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # TorchScript reads the classes' source through their module
    spec.loader.exec_module(mod)
    return mod


CASES = ("cell", "cell_traced", "wraprnn", "lstm", "lstm_traced", "sequential",
         "sequential_traced", "loop_function", "optional_none", "optional_given", "tied",
         "elementwise")


def _numpy(a):
    if isinstance(a, tuple):
        return tuple(_numpy(b) for b in a)
    return a.detach().numpy() if hasattr(a, "detach") else a


@pytest.mark.parametrize("name", CASES)
def test_archives_saved_by_pytorch_match_pytorch(torch, tmp_path, name):
    build, args = _models().example_inputs()[name]
    module = build()
    path = tmp_path / f"{name}.pt"
    torch.jit.save(module, str(path))
    expected = [e.detach().numpy() for e in _flatten_torch(torch.jit.load(str(path))(*args))]
    loaded = jit.load(path)
    got = flatten(loaded(*_numpy(args)))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    if isinstance(loaded, ScriptModule):
        theirs = {k: v.detach().numpy() for k, v in module.state_dict().items()}
        ours = loaded.state_dict()
        assert sorted(ours) == sorted(theirs)
        for k in theirs:
            np.testing.assert_array_equal(ours[k], theirs[k])


def _flatten_torch(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in _flatten_torch(o)]
    return [out]


def test_an_unsupported_pytorch_op_names_op_and_line(torch, tmp_path):
    class Spectrum(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 1e9:  # a branch this call does not take: loading is fine
                return torch.fft.rfft(x).abs()
            return x * 2

    path = tmp_path / "rfft.pt"
    torch.jit.save(torch.jit.script(Spectrum()), str(path))
    module = jit.load(path)
    x = np.ones(4, np.float32)
    np.testing.assert_array_equal(module(x), x * 2)
    with pytest.raises(UnsupportedOpError,
                       match=r"aten::fft_rfft\(%\w+\) at test_torchscript_archives.py:\d+") as info:
        module(x * 1e9)
    assert "no entry in torchlike's registry" in str(info.value)


def test_readme_section_runs_as_written(tmp_path):
    """README's "Run a model saved by PyTorch": the save with torch, then the load in a process
    where torch cannot be imported."""
    pytest.importorskip("torch")
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme.split("## Run a model saved by PyTorch")[1].split("\n## ")[0]
    save, load = [b.split("```")[0] for b in section.split("```python\n")[1:3]]
    (tmp_path / "save.py").write_text(save)
    (tmp_path / "load.py").write_text("import sys\nsys.modules['torch'] = None\n" + load)
    for script in ("save.py", "load.py"):
        done = subprocess.run([sys.executable, script], capture_output=True, text=True,
                              cwd=tmp_path, timeout=600)
        assert done.returncode == 0, done.stderr
    assert "prim::FusionGroup" in done.stdout and "def forward(self" in done.stdout


def test_loaded_module_runs_through_the_cuda_backend_emulated():
    """The CUDA backend's exact kernel source, run on the CPU by the emulator (no GPU here),
    wired as the fuser's "cuda" backend in strict mode: a loaded archive's fusion group
    compiles and runs there with PyTorch's answers."""
    import shutil

    from differential import use_emulator_as_cuda

    if shutil.which("g++") is None:
        pytest.skip("needs g++ (the CUDA emulator compiles kernels with it)")
    m = jit.load(fixture("elementwise"))
    args, expected = fixture_io("elementwise")
    with use_emulator_as_cuda(strict=True):
        jit.reset_stats()
        np.testing.assert_allclose(m(*args), expected[0], rtol=1e-5, atol=1e-6)
        s = jit.stats()
        assert s["cache_hits"] + s["cache_misses"] > 0 and not s["fallbacks"], s
