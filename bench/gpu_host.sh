#!/usr/bin/env bash
# The GPU checks in one bounded script, for a host with a CUDA GPU where python3 has numpy, numba,
# CuPy, PyTorch (CUDA), pytest and pytest-xdist (the device machines' image has them; elsewhere
# `pip install -e ".[test,bench,cuda13]"`).  Run from the repository root:
#
#     bash bench/gpu_host.sh OUTDIR [STEPS]
#
# STEPS (comma-separated, default "env,tests,bench"):
#   env      the GPU, driver and library versions                      -> OUTDIR/env.txt
#   tests    tests/test_cuda_gpu.py on the GPU, TESTS_WORKERS (8) workers -> OUTDIR/tests.log
#   bench    python -m bench --device cuda: torchlike, CuPy (eager, cupy.fuse), PyTorch eager at
#            2^20 and 2^24 (BENCH_SIZES)                            -> OUTDIR/bench/
#   compile  torchlike beside torch.compile (Inductor/Triton), one run per size of COMPILE_SIZES
#            ("24 26"), COMPILE_S each, the workloads COMPILE_FILTER names (default all; a
#            2^26 run of all of them takes ~8 min)
#                                             -> OUTDIR/compile/results_SIZE.json, compile.log
# Each step has its own time limit (seconds: TESTS_S, BENCH_S, COMPILE_S) so that the script
# ends, and its files are written, before the caller's limit.  OUTDIR/gpu.tgz holds everything.
set -u
OUTDIR=${1:?usage: bash bench/gpu_host.sh OUTDIR [STEPS]}
STEPS=${2:-env,tests,bench}
WORK=$(mktemp -d)
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export TORCHLIKE_CACHE_DIR=$WORK/kernels
mkdir -p "$OUTDIR"
has() { [[ ",$STEPS," == *",$1,"* ]]; }
stamp() { echo "== $1 $(date -u +%H:%M:%S)"; }

if has env; then
  stamp env
  { nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv
    nproc
    python3 - <<'EOF'
import importlib
for m in ("numpy", "numba", "llvmlite", "cupy", "torch", "triton", "pytest", "xdist"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "unavailable:", type(e).__name__, e)
import cupy
import torchlike
from torchlike.cuda_backend.compiler import cuda_include_dirs
from torchlike.cuda_backend.runtime import CudaBackend
print("cuda backend available:", CudaBackend().available(), "include:", cuda_include_dirs()[:1])
print("cupy runtime", cupy.cuda.runtime.runtimeGetVersion(),
      "driver", cupy.cuda.runtime.driverGetVersion())
EOF
  } > "$OUTDIR/env.txt" 2>&1
fi

if has tests; then
  stamp tests
  timeout "${TESTS_S:-170}" python3 -m pytest -q -n "${TESTS_WORKERS:-8}" -p no:cacheprovider -rfE \
      --durations=15 tests/test_cuda_gpu.py --junitxml="$WORK/junit.xml" \
      > "$OUTDIR/tests.log" 2>&1
  echo "rc=$?" >> "$OUTDIR/tests.log"
fi

if has bench; then
  stamp bench
  timeout "${BENCH_S:-200}" python3 -m bench --device cuda --quick --sizes "${BENCH_SIZES:-20,24}" \
      --modes torchlike,cupy,cupy.fuse,torch --out "$WORK/bench" > "$WORK/bench.log" 2>&1
  echo "rc=$?" >> "$WORK/bench.log"
  mkdir -p "$OUTDIR/bench"
  cp "$WORK/bench.log" "$WORK"/bench/results.json "$WORK"/bench/report.md "$OUTDIR/bench/" \
      2>/dev/null
fi

if has compile; then     # one process per size, so a size that runs out of time loses only itself
  mkdir -p "$OUTDIR/compile"
  times=""                # compile times once, in the first size's run
  for size in ${COMPILE_SIZES:-24 26}; do
    stamp "compile 2^$size"
    timeout "${COMPILE_S:-200}" python3 -m bench --device cuda --quick --sizes "$size" \
        --modes torchlike,torch.compile $times ${COMPILE_FILTER:+--filter "$COMPILE_FILTER"} \
        --out "$WORK/compile$size" \
        >> "$OUTDIR/compile/compile.log" 2>&1
    echo "2^$size rc=$?" >> "$OUTDIR/compile/compile.log"
    cp "$WORK/compile$size/results.json" "$OUTDIR/compile/results_$size.json" 2>/dev/null
    times=--no-compile-times
  done
fi

stamp done
rm -rf "$WORK/kernels"
tar czf "$OUTDIR/gpu.tgz" -C "$WORK" . 2>/dev/null
