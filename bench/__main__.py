"""``python -m bench``: torchlike fused vs interpreted vs the peers, side by side.

    python -m bench --quick --out bench/out            # CPU, small sizes, < 2 minutes
    python -m bench --out bench/out                    # CPU, 2^10..2^24 (the full run)
    python -m bench --device cuda --out bench/out      # GPU (CuPy), 2^10..2^26
    python -m bench --quick --filter gelu,chain --modes torchlike,numpy,numba
    python -m bench --filter chain_affine_8 --sizes 20 --modes torch,torch.compile,torchlike
    python -m bench --suite reductions --sizes 20,22,24 --out bench/results/reductions

Writes ``results.json`` (schema ``torchlike.bench/3``, fields in ``bench/README.md``; runs for
other devices already in the folder are kept), ``report.md`` and, where matplotlib is
installed, PNG plots.  Every mode is checked against numpy before it is timed.  glibc's
allocator page-faults fresh large outputs differently from process to process, so the harness
re-executes itself under one fixed allocator setting (recorded in results.json) before timing.
Kernels compile into a fresh, empty TORCHLIKE_CACHE_DIR (cold compile times; removed at the
end unless --cache-dir names one); Inductor's cache (TORCHINDUCTOR_CACHE_DIR) lives inside it
too, so torch.compile's compile times are cold as well.  Exit status: 0, 1 when a mode gave a wrong answer, 2 when
the run cannot start (no GPU for --device cuda, no workload matches --filter).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from .environment import ALLOCATOR_ENV, OPENMP_ENV, same_environment


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="a few small sizes, short runs, no torch.compile or jax unless "
                             "--modes names them (< 2 min on CPU)")
    parser.add_argument("--out", default="bench/out", help="output folder (default bench/out)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--filter", default="",
                        help="only workloads whose name contains one of these comma-separated "
                             "pieces")
    parser.add_argument("--suite", choices=["elementwise", "reductions"], default="elementwise",
                        help="elementwise (default): the hand-written and corpus workloads; "
                             "reductions: softmax, norms, logsumexp, ... over rows of 64, 1024 "
                             "and 32768 (bench/reduction_workloads.py)")
    parser.add_argument("--sizes", default="", help="comma-separated log2 sizes, e.g. 10,16,22")
    parser.add_argument("--modes", default="", help="comma-separated modes to run (default all)")
    parser.add_argument("--no-seed", action="store_true",
                        help="skip the seed's traced 1000-add loop (CPU)")
    parser.add_argument("--no-compile-times", action="store_true",
                        help="skip the cold and warm-from-disk compile times (a run that only "
                             "times steady state, e.g. a second size on a GPU host)")
    parser.add_argument("--cache-dir", default="",
                        help="TORCHLIKE_CACHE_DIR for the run (default: a fresh temporary one)")
    parser.add_argument("--corpus", default="",
                        help="corpus folder whose graphs join as corpus:<case> workloads "
                             "(default tests/corpus; e.g. ../shared/corpus)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    for k, v in OPENMP_ENV.items():
        os.environ.setdefault(k, v)
    if args.device == "cuda":
        from .cuda import unavailable_reason
        why = unavailable_reason()
        if why:
            print(f"python -m bench --device cuda: {why}", file=sys.stderr)
            return 2
    if argv is None:
        same_environment("bench")
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="torchlike-bench-cache-")
    os.makedirs(cache_dir, exist_ok=True)
    os.environ["TORCHLIKE_CACHE_DIR"] = cache_dir       # before torchlike is imported
    os.environ["CUPY_CACHE_DIR"] = os.path.join(cache_dir, "cupy")   # cold for CuPy too
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_dir, "inductor")   # and Inductor
    if args.corpus:                          # subprocesses (jax, compile times) inherit it
        from .corpus import ENV
        os.environ[ENV] = os.path.abspath(args.corpus)
    try:
        from torchlike import jit
        jit.set_cache_dir(cache_dir)
        allocator = {k: os.environ.get(k) for k in ALLOCATOR_ENV}
        if args.device == "cuda":
            from .cuda import run_cuda
            return run_cuda(args, allocator, cache_dir)
        from .cpu import run_cpu
        return run_cpu(args, allocator, cache_dir)
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
