"""The command line: ``python -m torchlike`` (or the ``torchlike`` console script).

    torchlike explain GRAPH [--input SPEC ...] [--inputs FILE.npz] [--backend cpu|cuda]
    torchlike run GRAPH [--input SPEC ...] [--inputs FILE.npz] [--output OUT.npz] [--repeat N]
    torchlike cache info|clear

GRAPH is a file holding a graph as PyTorch prints it (``print(torch.jit.script(f).graph)``),
or ``-`` for stdin.  Input specs are described in ``torchlike.cli.inputs``; docs/cli.md is the
reference.  Bad input is one line on stderr (``torchlike run: error: ...``) and exit status 1
(2 for a malformed command line, as argparse does); ``--debug`` adds the Python traceback.

``main(argv)`` returns the exit status instead of exiting, so tests can call it.  This package
sits above every other layer: it imports ``torchlike.jit`` and the fuser, and nothing in
``torchlike`` imports it.
"""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
import traceback
from typing import List, Optional

from ..errors import TorchlikeError
from . import commands
from .inputs import SPEC_HELP

__all__ = ["main", "build_parser"]

_PROG = "torchlike"

_INPUT_HELP = f"""\
inputs:
  --input SPEC gives one graph input, in order or by name; SPEC is
  {SPEC_HELP}
  (quote it: shells treat [...] as a file pattern):
    float32[64,1024]      a float32 tensor of that shape, random values (--seed)
    int64[]               a 0-d int64 tensor
    int=3  float=0.5  bool=true
                          a scalar, for graph inputs typed int, float or bool
    x=float32[8]  n=int=3 by name: the graph's input name (x.1) or the name
                          before PyTorch's .N suffix (x)
  --inputs FILE.npz maps its keys to input names (or arr_0, arr_1, ... to
  positions). An input left out whose graph type gives its dtype and every
  size (traced graphs: Float(3, 4, ...)) is made from that type. A module
  input (%self : __torch__.MyCell) takes its attributes from --params
  FILE.npz, keyed as the module's state_dict() (W, linear.weight)."""


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=28)


def _parser(sub, name: str, usage: str, description: str, **kw) -> argparse.ArgumentParser:
    return sub.add_parser(name, formatter_class=_formatter, usage=f"{_PROG} {name} {usage}",
                          description=textwrap.fill(description, 78), **kw)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="on an error, show the Python traceback too")


def _add_graph_and_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("graph", metavar="GRAPH", nargs="?",
                   help="a file holding a PyTorch-printed graph, or - for stdin")
    p.add_argument("--input", "-i", metavar="SPEC", nargs="+", action="extend",
                   help="graph inputs, in order or NAME=SPEC (see below); takes every word "
                        "up to the next option, so put GRAPH first")
    p.add_argument("--inputs", metavar="FILE.npz",
                   help="graph inputs from an .npz file, by name or arr_N position")
    p.add_argument("--params", metavar="FILE.npz",
                   help="attributes of a module input (%%self), keyed as its state_dict()")
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help="seed of the random input values (default 0)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG, formatter_class=_formatter,
        description="Explain and run graphs as PyTorch prints them, with torchlike's fuser.",
        epilog="examples:\n"
               "  torchlike explain gelu.txt --input 'float32[64,1024]'\n"
               "  torchlike run gelu.txt --input 'float32[64,1024]' --output out.npz\n"
               "  torchlike cache info\n\n"
               "Quote specs with brackets: shells treat [...] as a file pattern.\n"
               "'torchlike COMMAND --help' describes each command; docs/cli.md is the reference.")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="on an error, show the Python traceback too")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = _parser(
        sub, "explain", "GRAPH [--input SPEC ...] [--inputs FILE.npz] [--params FILE.npz]\n"
        "         [--seed N] [--backend {cpu,cuda}] [--full] [--debug]",
        help="print the fused graph, the fuser's decisions and the kernel source",
        description="Print the graph as torchlike fuses it, each fusion group and why each "
                    "op left out was not fused, and the generated kernel source of each group "
                    "(which needs the inputs: dtypes and shapes decide the code). The CUDA "
                    "source is generated without a GPU.",
        epilog=_INPUT_HELP + "\n\nexamples:\n"
               "  torchlike explain gelu.txt --input 'float32[64,1024]'\n"
               "  torchlike explain gelu.txt --input 'x=float32[64,1024]' --backend cuda\n"
               "  torchlike explain loop.txt --input 'float32[3,5]' int=4\n"
               "  cat gelu.txt | torchlike explain - --input 'float16[8]'")
    _add_graph_and_inputs(p)
    p.add_argument("--backend", choices=("cpu", "cuda"), default="cpu",
                   help="kernel source to show: cpu (Numba) or cuda (CUDA C); default cpu")
    p.add_argument("--full", action="store_true",
                   help="CUDA source with the tl_* prelude it includes (left out by default)")
    _add_common(p)
    p.set_defaults(handler=commands.explain)

    p = _parser(
        sub, "run", "GRAPH [--input SPEC ...] [--inputs FILE.npz] [--params FILE.npz]\n"
        "         [--seed N] [--output OUT.npz] [--repeat N]\n"
        "         [--backend {auto,cpu,cuda,interpreter}] [--debug]",
        help="run a graph and summarize its outputs, speed and fusion",
        description="Run the graph (specialized to the inputs, fused, kernels compiled and "
                    "cached) and print the shape and dtype of each output, the time per "
                    "call (the median of --repeat calls after a warm-up call) and how the "
                    "fusion groups ran: kernels compiled or loaded from the disk cache, and "
                    "groups that fell back to the interpreter, with the reason (jit.stats()).",
        epilog=_INPUT_HELP + "\n\nexamples:\n"
               "  torchlike run gelu.txt --input 'float32[64,1024]'\n"
               "  torchlike run gelu.txt --input 'float32[64,1024]' --seed 1 --output out.npz\n"
               "  torchlike run gelu.txt --inputs inputs.npz\n"
               "  torchlike run loop.txt --input 'x=float32[3,5]' n=int=4 --repeat 100\n"
               "  torchlike run cell.txt --params params.npz --input 'float32[3,4]' "
               "'float32[3,4]'")
    _add_graph_and_inputs(p)
    p.add_argument("--output", "-o", metavar="OUT.npz",
                   help="save the outputs (out0, out1, ... in return order, tuples flattened)")
    p.add_argument("--repeat", type=int, default=10, metavar="N",
                   help="timed calls after the warm-up call (default 10)")
    p.add_argument("--backend", choices=("auto", "cpu", "cuda", "interpreter"),
                   help="auto (Numba for numpy inputs), cpu, cuda (moves the inputs to the "
                        "GPU; needs CuPy and a GPU) or interpreter (no kernels); default: "
                        "TORCHLIKE_FUSER_BACKEND's value, auto unless set")
    _add_common(p)
    p.set_defaults(handler=commands.run)

    p = _parser(
        sub, "cache", "{info,clear} [--debug]",
        help="show or clear the on-disk kernel cache",
        description="info: the cache directory (TORCHLIKE_CACHE_DIR, default "
                    "$XDG_CACHE_HOME/torchlike or ~/.cache/torchlike), and per backend the "
                    "number of kernels and their size on disk. clear: remove them (only the "
                    "backends' directories inside it: cpu, cuda, cuda-emulated).",
        epilog="examples:\n  torchlike cache info\n  TORCHLIKE_CACHE_DIR=/tmp/k torchlike "
               "cache clear")
    p.add_argument("action", choices=("info", "clear"), help="info or clear")
    _add_common(p)
    p.set_defaults(handler=commands.cache_command)
    return parser


def _one_line(e: BaseException) -> str:
    text = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
    if isinstance(e, (TorchlikeError, OSError, TypeError, ValueError)):
        return text or type(e).__name__
    return (f"{type(e).__name__}: {text} (unexpected: --debug shows the traceback)"
            if text else f"{type(e).__name__} (unexpected: --debug shows the traceback)")


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a malformed command line (2, message printed)
        return e.code if isinstance(e.code, int) else 2
    where = f"{_PROG} {args.command}"
    if getattr(args, "graph", "") is None:
        print(f"{where}: error: no GRAPH given (a file, or - for stdin); put it before "
              "--input, which takes every word after it", file=sys.stderr)
        return 2
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print(f"{where}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (| head) left: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:
        if args.debug:
            traceback.print_exc()
        print(f"{where}: error: {_one_line(e)}", file=sys.stderr)
        return 1
