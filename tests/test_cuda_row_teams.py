"""Sub-warp teams in the CUDA row kernels' warp entries (``row_codegen.team_width``): a row of
fewer vectors than a warp has lanes is reduced by ``W`` lanes (a power of two), ``32 / W`` rows
a warp.  The lanes of a warp past the last row recompute the warp's first row with their stores
off, so every lane reaches every shuffle.  Each case below is generated for its own shape (as
the executor does: the width is in the kernel key), runs through the emulator -- where a
shuffle that not every lane reaches is an error -- in two schedules, with row counts that leave
part of the last warp idle, and is compared with the interpreter, per-row outputs (a variance,
a sum without keepdim) included.
"""
import pytest
from test_cuda_rows import NO_GXX, group_of, needs_gxx, run_rows
from test_fused_reductions import LAYER_NORM_STATS, close, data, interpreted, reduction_graph

from torchlike.cuda_backend.emulate import EmulatedCudaBackend, _HostDevice, build_many
from torchlike.cuda_backend.row_codegen import team_width
from torchlike.cuda_backend.row_launch import THREADS_PER_SM, WARP_BLOCK, gpu_shape
from torchlike.fuser import config
from torchlike.fuser.backend import analyze, signature_of
from torchlike.ir import parse_graph

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")]

# (graph, dtype, (rows, n), lanes per row): V = 4 float32, 8 float16, 2 float64 elements a lane
CASES = [
    ("softmax", "float32", (7, 64), 16),       # 2 rows a warp, the 4th warp half idle
    ("softmax", "float32", (13, 8), 2),        # 16 rows a warp
    ("softmax", "float32", (5, 3), 1),         # a row a lane; 3 % 4: the scalar entry
    ("sum", "float32", (37, 20), 8),           # per-row output (no keepdim); 20 % 4 == 0
    ("var", "float64", (9, 32), 16),
    ("logsumexp", "float16", (11, 100), 16),   # 100 % 8: the scalar entry, 16 lanes
    ("layer_norm", "float32", (6, 128), 32),   # whole warps: the code as before
    ("layer_norm", "float16", (19, 24), 4),    # per-element and per-row outputs
]
GRAPHS = {
    "softmax": reduction_graph("aten::softmax", keepdim=True, pre="mul", post=""),
    "sum": reduction_graph("aten::sum", keepdim=False, pre="mul", post="exp"),
    "var": reduction_graph("aten::var", keepdim=True, pre="mul", post="sub"),
    "logsumexp": reduction_graph("aten::logsumexp", keepdim=True, pre="mul", post="sub"),
    "layer_norm": LAYER_NORM_STATS,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    out = []
    for name, dtype, shape, width in CASES:
        sub = group_of(parse_graph(GRAPHS[name]))
        args = [data(shape, dtype, seed=shape[0] * shape[1])]
        if name == "layer_norm":
            args += [data(shape[1:], dtype, seed=1), data(shape[1:], dtype, seed=2)]
        spec = analyze(sub, signature_of(args))
        assert EmulatedCudaBackend().check(spec) is None
        out.append((sub, args, spec, EmulatedCudaBackend().generate(spec), width))
    if not NO_GXX:
        build_many([src for *_, src, _ in out])
    yield out
    config.set_cache_dir(None)


@needs_gxx
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}-{c[1]}-{c[2][0]}x{c[2][1]}"
                                                         for c in CASES])
def test_sub_warp_teams_match_the_interpreter(built, case):
    sub, args, spec, src, width = built[case]
    assert team_width(spec) == src.info.team_width == width
    assert width == 32 or f"tl_warp_allreduce<TL_SUM, {width}>" in src.source \
        or f"tl_warp_allreduce<TL_MAX, {width}>" in src.source
    want = interpreted(sub, *args)
    entries = {}
    for order in ("forward", "skewed-reverse"):
        got = run_rows(sub, args, "warp", order, source=src, launches=entries)
        for g, w in zip(got, want, strict=True):
            close(g, w, args[0].dtype.name, f"{CASES[case]} {order}")
    vec = spec.rows.row_size % src.info.vector == 0
    assert set(entries) == {src.info.entries[0][:-len("_warp")] + "_warp" + ("_vec" * vec)}


@pytest.mark.parametrize("width", [1, 2, 8, 16, 32])
def test_gpu_grid_covers_the_rows_a_warp_takes(width):
    """On a GPU, ``gpu_shape`` launches blocks of 4 warps, each warp ``32 / width`` rows: as
    many blocks as cover the rows in one sweep, at most two full SMs' worth (the rows are
    grid-strided beyond that)."""
    per_warp = 32 // width
    for rows in (1, 7, 4 * per_warp, 4 * per_warp + 1, 10 ** 6):
        grid, block = gpu_shape("warp", rows, 64, 132, per_warp)
        assert block == WARP_BLOCK == 128
        cap = 2 * 132 * (THREADS_PER_SM // block)
        assert grid == min(cap, -(-rows // (4 * per_warp))), (rows, grid)
        assert grid * 4 * per_warp >= rows or grid == cap


@needs_gxx
def test_the_launcher_tells_the_device_the_rows_a_warp_takes(built, monkeypatch):
    """``row_launch.bind`` passes ``32 / team_width`` to ``launch_rows`` for the warp entries
    (the GPU sizes its grid by it) and 1 for the block entries."""
    sub, args, spec, src, width = built[0]  # softmax over rows of 64: 16 lanes, 2 rows a warp
    seen = []
    real = _HostDevice.launch_rows

    def spy(self, e, packed, team, rows, n, per_warp=1):
        seen.append((team, rows, n, per_warp))
        return real(self, e, packed, team, rows, n, per_warp)
    monkeypatch.setattr(_HostDevice, "launch_rows", spy)
    for team in ("warp", "block"):
        run_rows(sub, args, team, source=src)
    assert seen == [("warp", 7, 64, 2), ("block", 7, 64, 1)], seen
