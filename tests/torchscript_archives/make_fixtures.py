"""Write the committed fixtures: a few small TorchScript archives saved by PyTorch, with their
inputs and PyTorch's outputs (``<name>.npz``: ``a0``, ``a1_0``... the arguments, nested
tuples spelled by the key; ``o0``, ``o1``... the outputs, flattened).

    python tests/torchscript_archives/make_fixtures.py      # needs torch (2.13)
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import example_inputs  # noqa: E402

FIXTURES = ("cell", "wraprnn", "lstm", "sequential", "loop_function", "tied", "elementwise")


def flatten_args(args, prefix="a"):
    out = {}
    for i, a in enumerate(args):
        key = f"{prefix}{i}" if prefix == "a" else f"{prefix}_{i}"
        if isinstance(a, tuple):
            out.update(flatten_args(a, key))
        else:
            out[key] = a.numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    return out


def flatten_outputs(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in flatten_outputs(o)]
    return [out.detach().numpy()]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    models = example_inputs()
    for name in FIXTURES:
        build, args = models[name]
        m = build()
        path = os.path.join(here, f"{name}.pt")
        torch.jit.save(m, path)
        out = torch.jit.load(path)(*args)
        arrays = flatten_args(args)
        arrays.update({f"o{i}": o for i, o in enumerate(flatten_outputs(out))})
        np.savez(os.path.join(here, f"{name}.npz"), **arrays)
        print(name, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
