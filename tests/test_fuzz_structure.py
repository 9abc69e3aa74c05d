"""Random programs of several statements, differentially: views and shape ops (transpose,
permute, reshape, slicing, select, narrow, flip, roll, expand, cat, stack, chunk, split),
in-place writes into fresh tensors and their views, dtype conversions, masks, gathers, size
arithmetic and (scripted) control flow, between elementwise ops and reductions.  Each seed's
function is captured by ``torch.jit.script`` and by ``torch.jit.trace``; torchlike runs both
printed graphs interpreted, fused and strict-fused (``graph_modes``) and must agree with eager
PyTorch.  ``test_fuzz_programs`` draws single expressions of elementwise math; this file draws
the structure around them, which is where aliasing, layout and shape bugs live.

The generator tracks each value's shape and kind (float, int, bool), so most draws are valid
programs; one PyTorch rejects is drawn again.  Tolerance: 256 ulp of the least precise float
the program computes in, as in ``test_fuzz_programs``."""
from __future__ import annotations

import random
import warnings
from dataclasses import dataclass
from typing import List, Tuple

import numpy as np
import pytest
from graph_modes import graph_modes, program_module
from test_fuzz_programs import _EPS, SEEDS, _agree

# TORCHLIKE_FUZZ_SEEDS as in test_fuzz_programs (24 take ~25 s on 2 cores)


@dataclass
class Val:
    name: str
    shape: Tuple[int, ...]
    kind: str  # "f", "i" or "b"


class Gen:
    """Writes one function's body statement by statement, tracking shapes and kinds."""

    def __init__(self, rng: random.Random, script: bool):
        self.rng, self.script = rng, script
        self.lines: List[str] = []
        self.vals: List[Val] = []
        self.scalars: List[str] = []  # a scripted function's float and int parameters
        self.n = 0

    def new(self, expr: str, shape, kind: str) -> Val:
        name = f"v{self.n}"
        self.n += 1
        self.lines.append(f"{name} = {expr}")
        v = Val(name, tuple(shape), kind)
        self.vals.append(v)
        return v

    def pick(self, kind=None, min_rank=0) -> Val:
        c = [v for v in self.vals if (kind is None or v.kind in kind) and len(v.shape) >= min_rank]
        return self.rng.choice(c) if c else None

    # ---- one statement -------------------------------------------------------------------
    def step(self):
        r = self.rng
        op = r.choice([self.view, self.view, self.view, self.math, self.math, self.combine,
                       self.inplace, self.reduce, self.convert, self.mask, self.index,
                       self.sizes, self.control, self.create, self.matmul, self.mutate_input,
                       self.integer, self.like] + [self.scalar] * bool(self.scalars))
        op()

    def scalar(self):
        r = self.rng
        x = self.pick(min_rank=1)
        name = r.choice(self.scalars)
        if name.startswith("n"):
            e, kind = r.choice([(f"{x.name}.roll({name}, 0)", x.kind),
                                (f"{x.name} * {name}" if x.kind != "b" else f"{x.name}.long()",
                                 "i" if x.kind != "f" else "f"),
                                (f"torch.full_like({x.name}, {name})", x.kind)])
            return self.new(e, x.shape, kind)
        if x.kind != "f":
            return self.new(f"{x.name} * {name}", x.shape, "f")
        e = r.choice([f"{x.name} * {name}", f"{x.name}.clamp(max={name})",
                      f"torch.where({x.name} > {name}, {x.name}, {name} * 2)",
                      f"{x.name} + {name} * {x.name}.size(0)", f"torch.pow({x.name}.abs(), {name})"])
        return self.new(e, x.shape, "f")

    def create(self):
        r = self.rng
        x = self.pick(min_rank=1)
        s = list(x.shape)
        e, shape, kind = r.choice([
            (f"torch.zeros_like({x.name})", s, x.kind),
            (f"torch.ones_like({x.name}, dtype=torch.float32)", s, "f"),
            (f"torch.full_like({x.name}, 2)", s, x.kind),
            (f"{x.name}.new_zeros({s[-1]})", [s[-1]], x.kind),
            (f"torch.arange({s[-1]}) * 0.5 + {x.name}" if x.kind != "b" else
             f"torch.arange({s[-1]}) + {x.name}.long()", s, "f" if x.kind == "f" else "i"),
            (f"torch.tril({x.name})" if len(s) >= 2 else f"{x.name}.clone()", s, x.kind),
            (f"torch.triu({x.name}, 1)" if len(s) >= 2 else f"{x.name}.clone()", s, x.kind),
            (f"F.pad({x.name}, [1, 2])" if x.kind != "b" else f"{x.name}.clone()",
             s[:-1] + [s[-1] + 3] if x.kind != "b" else s, x.kind),
        ])
        return self.new(e, shape, kind)

    def like(self):
        r = self.rng
        x = self.pick(min_rank=1)
        same = [v for v in self.vals if int(np.prod(v.shape)) == int(np.prod(x.shape))]
        y = r.choice(same)
        bc = [v for v in self.vals if len(v.shape) >= len(x.shape) and all(
            a in (1, c) for a, c in zip(x.shape[::-1], v.shape[::-1]))]
        z = r.choice(bc)
        e, shape = r.choice([(f"{x.name}.reshape_as({y.name})", y.shape),
                             (f"{x.name}.expand_as({z.name})", z.shape),
                             (f"{x.name}.contiguous().view({', '.join(map(str, y.shape))})"
                              if y.shape else f"{x.name}.reshape(())", y.shape)])
        return self.new(e, shape, x.kind)

    def matmul(self):
        r = self.rng
        x = self.pick("f", min_rank=1)
        if x is None:
            return self.math()
        s = list(x.shape)
        # positive terms: a sum of products of mixed signs cancels (-10.70 of terms ~600),
        # and the order of accumulation, which differs from PyTorch's, shows in the result
        w = f"torch.linspace(0.1, 1, {s[-1] * 3}, dtype={x.name}.dtype).reshape({s[-1]}, 3)"
        x = self.new(f"torch.sigmoid({x.name})", s, "f")
        e, shape = r.choice([(f"{x.name} @ {w}", s[:-1] + [3]),
                             (f"torch.matmul({x.name}, {x.name}.transpose(-1, -2))"
                              if len(s) >= 2 else f"torch.dot({x.name}, {x.name})",
                              s[:-1] + [s[-2]] if len(s) >= 2 else []),
                             (f"F.linear({x.name}, {w}.t())", s[:-1] + [3])])
        return self.new(e, shape, "f")

    def mutate_input(self):
        r = self.rng
        xs = [v for v in self.vals if v.name.startswith("x") and v.kind == "f"]
        if not xs:
            return self.math()
        x = r.choice(xs)
        later = r.choice(["before", "after"])
        if later == "before":  # a value read before the write must keep the old contents
            self.new(f"{x.name} * 2", x.shape, "f")
        self.lines.append(r.choice([f"{x.name}.add_(1)", f"{x.name}.mul_(0.5)",
                                    f"{x.name}.clamp_(-2, 2)", f"{x.name}.tanh_()"]))
        return self.new(f"{x.name} * 2", x.shape, "f")  # tanh_ then + 1 cancels near -1

    def integer(self):
        r = self.rng
        x = self.pick("i") or self.new(f"{self.pick().name}.long()", self.pick().shape, "i")
        e = r.choice([f"{x.name} // 3", f"{x.name} % 4", f"{x.name} & 6", f"{x.name} << 1",
                      f"torch.div({x.name}, 2, rounding_mode='trunc')", f"{x.name} * {x.name}",
                      f"{x.name}.abs() ** 2", f"{x.name} / 4", f"torch.bitwise_xor({x.name}, 5)"])
        return self.new(e, x.shape, "f" if " / " in e else "i")

    def math(self):
        r = self.rng
        x = self.pick("f")
        if x is None:
            x = self.pick()
            return self.new(f"{x.name}.float() * 0.5", x.shape, "f")
        e = r.choice(["torch.tanh({})", "torch.sigmoid({})", "F.gelu({})", "({} * 1.5 - 0.25)",
                      "torch.exp({}.clamp(-10, 10))", "F.silu({})", "torch.relu({})",
                      "({} / 3)", "torch.sqrt({}.abs())", "({} * {})"])
        return self.new(e.format(x.name, x.name), x.shape, "f")

    def view(self):
        r = self.rng
        x = self.pick(min_rank=1)
        s = list(x.shape)
        k = len(s)
        d = r.randrange(k)
        choices = []
        if k >= 2:
            a, b = r.sample(range(k), 2)
            t = list(s)
            t[a], t[b] = t[b], t[a]
            choices.append((f"{x.name}.transpose({a}, {b})", t))
            p = list(range(k))
            r.shuffle(p)
            choices.append((f"{x.name}.permute({', '.join(map(str, p))})", [s[i] for i in p]))
            choices.append((f"{x.name}.flatten()", [int(np.prod(s))]))
            choices.append((f"{x.name}[:, 0]" if s[1] else f"{x.name}[0]",
                            [s[0]] + s[2:] if s[1] else s[1:]))
        if k == 2:
            choices.append((f"{x.name}.t()", [s[1], s[0]]))
        if s[d] > 1:
            lo = r.randrange(1, s[d])
            choices.append((f"{x.name}.narrow({d}, {lo}, {s[d] - lo})",
                            s[:d] + [s[d] - lo] + s[d + 1:]))
            idx = ", ".join([":"] * d + [f"{lo}:"])
            choices.append((f"{x.name}[{idx}]", s[:d] + [s[d] - lo] + s[d + 1:]))
            idx = ", ".join([":"] * d + ["::2"])
            choices.append((f"{x.name}[{idx}]", s[:d] + [(s[d] + 1) // 2] + s[d + 1:]))
            choices.append((f"{x.name}.select({d}, {s[d] - 1})", s[:d] + s[d + 1:]))
            choices.append((f"{x.name}[..., -1]", s[:-1]))
        choices.append((f"{x.name}.flip({d})", s))
        choices.append((f"{x.name}.flip(-1)", s))
        choices.append((f"{x.name}.roll({r.randint(-3, 3)}, {d})", s))
        choices.append((f"{x.name}.unsqueeze({d})", s[:d] + [1] + s[d:]))
        choices.append((f"{x.name}.unsqueeze(-1)", s + [1]))
        choices.append((f"{x.name}.reshape(-1)", [int(np.prod(s))]))
        if 1 in s:
            choices.append((f"{x.name}.squeeze()", [n for n in s if n != 1]))
            i = s.index(1)
            choices.append((f"{x.name}.squeeze({i})", s[:i] + s[i + 1:]))
            e = list(s)
            e[i] = 3
            choices.append((f"{x.name}.expand({', '.join(map(str, e))})", e))
        if k <= 3:
            rep = [r.choice([1, 2]) for _ in s]
            choices.append((f"{x.name}.repeat({', '.join(map(str, rep))})",
                            [a * b for a, b in zip(s, rep)]))
        if s[-1] % 2 == 0 and s[-1]:
            choices.append((f"{x.name}.reshape({', '.join(map(str, s[:-1] + [2, s[-1] // 2]))})",
                            s[:-1] + [2, s[-1] // 2]))
            choices.append((f"{x.name}.chunk(2, -1)[{r.randrange(2)}]", s[:-1] + [s[-1] // 2]))
            choices.append((f"{x.name}.split({s[-1] // 2}, -1)[1]", s[:-1] + [s[-1] // 2]))
        choices.append((f"{x.name}.unbind({d})[0]", s[:d] + s[d + 1:]) if s[d] else
                       (f"{x.name}.contiguous()", s))
        choices.append((f"{x.name}.contiguous()", s))
        e, shape = r.choice(choices)
        return self.new(e, shape, x.kind)

    def combine(self):
        r = self.rng
        x = self.pick(min_rank=1)
        same = [v for v in self.vals if v.shape == x.shape and v.kind == x.kind]
        y = r.choice(same)
        s = list(x.shape)
        d = r.randrange(len(s))
        e = r.choice(["cat", "stack", "add", "where"])
        if e == "cat":
            t = list(s)
            t[d] *= 2
            return self.new(f"torch.cat([{x.name}, {y.name}], {d})", t, x.kind)
        if e == "stack":
            return self.new(f"torch.stack([{x.name}, {y.name}], {d})", s[:d] + [2] + s[d:], x.kind)
        # broadcasting against a same-rank value with ones, or a trailing-dims value
        b = [v for v in self.vals if len(v.shape) <= len(s) and all(
            a in (1, c) for a, c in zip(v.shape[::-1], s[::-1]))]
        z = r.choice(b)
        if e == "where":
            c = r.choice([v for v in self.vals if v.kind == "b" and all(
                a in (1, c) for a, c in zip(v.shape[::-1], s[::-1])) and len(v.shape) <= len(s)]
                or [None])
            cond = c.name if c is not None else f"{x.name} > 0"
            kind = "f" if "f" in (x.kind, z.kind) else "i" if "i" in (x.kind, z.kind) else "b"
            return self.new(f"torch.where({cond}, {x.name}, {z.name})", s, kind)
        kind = "f" if "f" in (x.kind, z.kind) else "i"
        return self.new(f"{x.name} + {z.name}", s, kind)

    def inplace(self):
        r = self.rng
        x = self.pick(min_rank=1)
        if x.kind == "b":
            return self.math()
        c = self.new(f"{x.name}.clone()", x.shape, x.kind)
        s = list(x.shape)
        target = c.name
        if s[-1] > 1 and r.random() < 0.6:
            target = r.choice([f"{c.name}[..., 0]", f"{c.name}[..., 1:]",
                               f"{c.name}.narrow(-1, 0, 1)", f"{c.name}[..., ::2]"])
            if len(s) >= 2 and s[0] > 1:
                target = r.choice([target, f"{c.name}[0]", f"{c.name}.select(0, 1)",
                                   f"{c.name}.transpose(0, -1)[0]"])
        val = "2" if x.kind == "i" else "0.5"
        stmt = r.choice([f"{target}.mul_({val})", f"{target}.add_(1)", f"{target}.zero_()",
                         f"{target}.fill_({val})", f"{target}.clamp_(-1, 1)",
                         f"{target}.copy_({target} * 3)", f"{target}.neg_()"]
                        + ([f"{target}.relu_()", f"{target}.sigmoid_()"] if x.kind == "f" else []))
        if target == c.name and r.random() < 0.4:
            stmt = r.choice([f"{c.name}[0] = {val}", f"{c.name}[..., -1] = {val}",
                             f"{c.name}[{c.name} > 0] = {val}" if not self.script else
                             f"{c.name}.masked_fill_({c.name} > 0, {val})"])
        self.lines.append(stmt)
        if r.random() < 0.5:  # read the base after writing through a view
            return self.new(f"{c.name} * 2", c.shape, c.kind)
        return c

    def reduce(self):
        r = self.rng
        x = self.pick(min_rank=1)
        s = list(x.shape)
        d = r.randrange(len(s))
        if x.kind == "b":
            return self.new(f"{x.name}.any({d})", s[:d] + s[d + 1:], "b")
        if x.kind == "i":
            e = r.choice([f"{x.name}.sum({d})", f"{x.name}.amax({d})" if s[d] else
                          f"{x.name}.sum({d})", f"{x.name}.cumsum({d})"])
            return self.new(e, s if "cumsum" in e else s[:d] + s[d + 1:], "i")
        e, shape = r.choice([
            (f"{x.name}.sum({d})", s[:d] + s[d + 1:]),
            (f"{x.name}.mean({d}, keepdim=True)", s[:d] + [1] + s[d + 1:]),
            (f"torch.softmax({x.name}, {d})", s),
            (f"{x.name} - {x.name}.amax({d}, keepdim=True)" if s[d] else f"{x.name} * 2", s),
            (f"{x.name}.max({d})[1]" if s[d] else f"{x.name}.sum({d})", s[:d] + s[d + 1:]),
            (f"{x.name}.sum()", []),
            (f"torch.cumsum({x.name}, {d})", s),
            (f"{x.name}.var({d}, keepdim=True)", s[:d] + [1] + s[d + 1:]),
            (f"torch.logsumexp({x.name}, {d})", s[:d] + s[d + 1:]),
            (f"{x.name}.std({d}, unbiased=False)", s[:d] + s[d + 1:]),
            (f"{x.name}.prod({d}, keepdim=True)", s[:d] + [1] + s[d + 1:]),
            (f"{x.name}.norm(dim={d})", s[:d] + s[d + 1:]),
            (f"{x.name}.amin({d})" if s[d] else f"{x.name}.sum({d})", s[:d] + s[d + 1:]),
            (f"{x.name}.min({d})[0] * 2" if s[d] else f"{x.name}.sum({d})", s[:d] + s[d + 1:]),
            (f"torch.log_softmax({x.name}, {d}) + {x.name}", s),
            (f"{x.name} / {x.name}.sum({d}, keepdim=True)", s),
            (f"({x.name} - {x.name}.mean({d}, keepdim=True)) * torch.rsqrt("
             f"{x.name}.var({d}, keepdim=True, unbiased=False) + 1e-5)", s),
        ])
        return self.new(e, shape, "i" if "[1]" in e else "f")

    def convert(self):
        r = self.rng
        x = self.pick()
        e, kind = r.choice([(".float()", "f"), (".double()", "f"), (".long()", "i"),
                            (".int()", "i"), (".bool()", "b"), (".to(torch.float16)", "f")])
        if x.kind == "f" and kind == "i":
            # float -> int of inf / nan is undefined in C; rounded, not truncated: tanh(9.01) + 1
            # is 2.0 in PyTorch and 1.9999999 in numpy, a last-bit difference truncation magnifies
            e = ".clamp(-1000, 1000).round()" + e
        if x.kind == "f" and kind == "b":
            e = ".abs().gt(0.45)"
        return self.new(f"{x.name}{e}", x.shape, kind)

    def mask(self):
        r = self.rng
        x = self.pick(min_rank=1)
        if x.kind == "b":
            return self.new(self.rng.choice([f"{x.name} & ~{x.name}.flip(-1)",
                                             f"{x.name} | {x.name}.roll(1, -1)",
                                             f"{x.name} ^ ({x.name}.sum(-1, keepdim=True) > 1)",
                                             f"{x.name}.logical_not()"]), x.shape, "b")
        # thresholds no op saturates to (tanh(9.01) is 1.0 in PyTorch, 1 - 2**-24 in numpy)
        if x.kind == "f" and r.random() < 0.3:
            return self.new(f"(({x.name} > 0.3) & ({x.name} < 0.7)) | {x.name}.isnan()", x.shape, "b")
        val = "0.0" if x.kind == "f" else "0"
        return self.new(r.choice([f"{x.name}.masked_fill({x.name} < 0, {val})",
                                  f"({x.name} > 0).to({x.name}.dtype) * {x.name}",
                                  f"torch.where({x.name} > 1.3, {x.name}, {x.name} * 0)"]),
                        x.shape, x.kind)

    def index(self):
        r = self.rng
        x = self.pick(min_rank=1)
        s = list(x.shape)
        d = r.randrange(len(s))
        if not s[d]:
            return self.view()
        idx = [r.randrange(s[d]) for _ in range(r.choice([1, 2, 3]))]
        lit = f"torch.tensor({idx})"
        e, shape = r.choice([
            (f"{x.name}.index_select({d}, {lit})", s[:d] + [len(idx)] + s[d + 1:]),
            (f"{x.name}[{lit}]", [len(idx)] + s[1:]),
            (f"torch.gather({x.name}, {d}, {x.name}.argsort({d}))" if x.kind != "b" else
             f"{x.name}.flip({d})", s),
        ])
        return self.new(e, shape, x.kind)

    def sizes(self):
        x = self.pick("f", min_rank=1) or self.pick(min_rank=1)
        e = self.rng.choice([f"{x.name} * {x.name}.size(-1)", f"{x.name} / {x.name}.shape[0]",
                             f"{x.name} + {x.name}.numel()", f"{x.name} * {x.name}.dim()"])
        if x.kind != "f":
            e = f"{x.name}.float() * {x.name}.size(-1)"
        if x.kind == "i" and "/" in e:
            e = e.replace("/", "*")
        return self.new(e, x.shape, "f" if x.kind == "b" or "/" in e else x.kind)

    def control(self):
        r = self.rng
        x = self.pick("f")
        if x is None:
            return self.view()
        if len(x.shape) >= 1 and x.shape[0] and r.random() < 0.3:  # a list built in a loop
            ys = f"ys{self.n}"
            self.lines.append(f"{ys} = []")
            self.lines.append(f"for t in {x.name}.unbind(0):")
            self.lines.append(f"    {ys}.append(t * 2 + 1)")
            d = r.choice([0, -1])
            shape = x.shape if d == 0 else x.shape[1:] + x.shape[:1]
            return self.new(f"torch.stack({ys}, {d})", shape, "f")
        if r.random() < 0.5:
            self.lines.append(f"if bool({x.name}.sum() > 0):")
            self.lines.append(f"    {x.name} = {x.name} * 2")
            self.lines.append("else:")
            self.lines.append(f"    {x.name} = {x.name} - 1")
            return x
        v = self.new(f"{x.name} * 1", x.shape, "f")
        self.lines.append(f"for _ in range({r.choice([1, 2, 3])}):")
        self.lines.append(f"    {v.name} = {v.name} * 0.5 + {x.name}")
        return v


def _make_inputs(rng: random.Random, torch):
    n = rng.choice([1, 2, 3])
    base = [rng.choice([1, 2, 3, 4, 6]) for _ in range(rng.choice([1, 2, 3, 4]))]
    base[0] = max(base[0], 2)
    if rng.random() < 0.25:  # rows long enough for the kernels' vector and remainder loops
        base[-1] = rng.choice([17, 33, 64, 100])
    args, vals = [], []
    for i in range(n):
        shape = list(base) if i == 0 else rng.choice([list(base), list(base[1:]), [1] + base[1:],
                                                        list(base)])
        kind = rng.choice(["f", "f", "f", "i", "b"])
        if kind == "f":
            dt = rng.choice([torch.float32, torch.float32, torch.float64, torch.float16])
            a = (torch.randn(shape, dtype=torch.float64) * rng.choice([1, 3])).to(dt)
            if a.numel() > 2 and rng.random() < 0.3:
                a.view(-1)[rng.randrange(a.numel())] = rng.choice(
                    [float("nan"), float("inf"), -0.0])
        elif kind == "i":
            a = torch.randint(-9, 10, shape, dtype=rng.choice([torch.int64, torch.int32]))
        else:
            a = torch.rand(shape) > 0.5
        if len(shape) >= 2 and rng.random() < 0.25:  # a transposed input
            a = a.transpose(-1, -2).contiguous().transpose(-1, -2)
        elif len(shape) >= 1 and rng.random() < 0.15:  # every other element of a wider array
            wide = torch.zeros(shape[:-1] + [2 * shape[-1]], dtype=a.dtype)
            wide[..., ::2] = a
            a = wide[..., ::2]
        args.append(a)
        vals.append(Val(f"x{i}", tuple(shape), kind))
    return args, vals


def _same_layout(x):
    """A copy of the numpy array ``x`` with its strides' pattern (transposed, or every other
    element of a wider array): ``ndarray.copy`` would make it contiguous."""
    if not isinstance(x, np.ndarray) or x.flags.c_contiguous:
        return x.copy() if isinstance(x, np.ndarray) else x
    if x.ndim >= 2 and np.swapaxes(x, -1, -2).flags.c_contiguous:
        return np.swapaxes(np.swapaxes(x, -1, -2).copy(), -1, -2)
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    return wide[..., ::2]


def _program(rng: random.Random, script: bool):
    import torch
    args, vals = _make_inputs(rng, torch)
    g = Gen(rng, script)
    g.vals = list(vals)
    params = [v.name for v in vals]
    if script and rng.random() < 0.3:  # scalar parameters: graph inputs of type float, int
        g.scalars = rng.sample(["s: float", "n: int"], rng.choice([1, 2]))
        params += g.scalars
        args += [rng.choice([0.5, -1.5, 2.0]) if p[0] == "s" else rng.choice([0, 1, 3])
                 for p in g.scalars]
        g.scalars = [p.split(":")[0] for p in g.scalars]
    for _ in range(rng.choice([2, 3, 4, 5, 6])):
        g.step()
    outs = [g.vals[-1].name] + ([g.vals[-2].name] if len(g.vals) > 2 and rng.random() < 0.3
                                else [])
    body = "".join(f"    {line}\n" for line in g.lines)
    src = ("import torch\nimport torch.nn.functional as F\n\n\n"
           f"def f({', '.join(params)}):\n{body}"
           f"    return {', '.join(dict.fromkeys(outs))}\n")
    return src, args


def _copy(a):
    """A copy of the tensor ``a`` with its layout (``clone`` makes a strided input contiguous,
    and ``x.contiguous()`` then aliases x where PyTorch, given x itself, copies)."""
    import torch
    return torch.from_numpy(_same_layout(a.numpy())) if hasattr(a, "numpy") else a


def _numpy(a):
    return a.numpy() if hasattr(a, "numpy") else a


def _accepted(seed: int, capture: str, tmp_path):
    import torch
    rng = random.Random(seed * 2 + (capture == "trace"))
    torch.manual_seed(seed)
    for attempt in range(50):
        src, args = _program(rng, capture == "script")
        mod = program_module(tmp_path, f"sfuzz_{capture}_{seed}_{attempt}", src)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                after = [_copy(a) for a in args]  # the program may write into its inputs
                want = mod.f(*after)
                fn = torch.jit.script(mod.f) if capture == "script" else \
                    torch.jit.trace(mod.f, tuple(_copy(a) for a in args), check_trace=False)
                text = str(fn.graph)
            except Exception:
                continue
        wants = want if isinstance(want, tuple) else (want,)
        if any(not isinstance(w, torch.Tensor) for w in wants):
            continue
        wants = [w.contiguous().numpy() for w in wants] + [_numpy(a) for a in after]
        return src, [_numpy(a) for a in args], wants, text
    raise AssertionError(f"seed {seed}: no program PyTorch accepts in 50 draws")


@pytest.mark.parametrize("capture", ["script", "trace"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_structure(torch, tmp_path, seed, capture):
    """Outputs, and the inputs after the call (a program may write into them), as PyTorch's."""
    src, inputs, wants, text = _accepted(seed, capture, tmp_path)
    floats = [x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
              for x in inputs if isinstance(x, np.ndarray)]
    floats += [np.dtype(np.float16)] * ("float16" in src)
    for mode, run in graph_modes(text):
        args = [_same_layout(x) for x in inputs]
        got = run(*args)
        got = (got if isinstance(got, tuple) else (got,)) + tuple(args)  # and the inputs after
        assert len(got) == len(wants), f"seed {seed} ({capture}, {mode})\n{src}"
        for k, w in enumerate(map(np.asarray, wants)):
            eps = max([_EPS.get(w.dtype, 0.0)] + [_EPS[d] for d in floats])
            _agree(got[k], w, 256 * eps,
                   f"seed {seed} output {k} ({capture}, {mode}) vs PyTorch\n{src}\n{text}")
