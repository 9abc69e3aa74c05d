"""PyTorch models whose TorchScript archives the tests load with torchlike (imports torch:
used only where torch is installed, and by ``make_fixtures.py``)."""
from typing import List, Optional, Tuple

import torch
from torch import nn


class MyDecisionGate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        else:
            return -x


class MyCell(nn.Module):
    def __init__(self, dg):
        super().__init__()
        self.dg = dg
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.dg(self.linear(x)) + h)
        return new_h, new_h


class MyRNNLoop(nn.Module):
    def __init__(self):
        super().__init__()
        x, h = torch.rand(3, 4), torch.rand(3, 4)
        self.cell = torch.jit.trace(MyCell(torch.jit.script(MyDecisionGate())), (x, h))

    def forward(self, xs):
        h, y = torch.zeros(3, 4), torch.zeros(3, 4)
        for i in range(xs.size(0)):
            y, h = self.cell(xs[i], h)
        return y, h


class WrapRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.loop = torch.jit.script(MyRNNLoop())

    def forward(self, xs):
        y, h = self.loop(xs)
        return torch.relu(y)


class LSTMCell(nn.Module):
    def __init__(self, input_size: int = 4, hidden: int = 8):
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(4 * hidden, input_size))
        self.w_hh = nn.Parameter(torch.randn(4 * hidden, hidden))
        self.b_ih = nn.Parameter(torch.randn(4 * hidden))
        self.b_hh = nn.Parameter(torch.randn(4 * hidden))

    def forward(self, x, state: Tuple[torch.Tensor, torch.Tensor]
                ) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        hx, cx = state
        gates = torch.mm(x, self.w_ih.t()) + self.b_ih + torch.mm(hx, self.w_hh.t()) + self.b_hh
        i, f, g, o = gates.chunk(4, 1)
        i = torch.sigmoid(i)
        f = torch.sigmoid(f)
        g = torch.tanh(g)
        o = torch.sigmoid(o)
        cy = (f * cx) + (i * g)
        hy = o * torch.tanh(cy)
        return hy, (hy, cy)


def sequential():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.LayerNorm(8), nn.Dropout(0.1),
                         nn.Linear(8, 3), nn.GELU(), nn.Sigmoid(), nn.Tanh()).eval()


def loop_function(x, n: int):
    y = x
    for i in range(n):
        y = torch.sigmoid(y * 1.1) + i
    k = 0
    while k < 3:
        y = y - 0.5
        k += 1
    return y


class OptionalArg(nn.Module):
    scale: torch.jit.Final[float]

    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.register_buffer("b", torch.arange(4.0))

    def forward(self, x, y: Optional[torch.Tensor] = None) -> torch.Tensor:
        if y is not None:
            x = x + y
        s: List[int] = [x.size(0), 2]
        return x * self.scale + self.b + float(s[0])


class Tied(nn.Module):
    """Two linears sharing one weight, and a buffer that is a strided view at an offset."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.b.weight = self.a.weight
        big = torch.arange(40.0).reshape(5, 8)
        self.register_buffer("v", big[2:3, 1::2])

    def forward(self, x):
        return self.b(torch.relu(self.a(x))) + self.v


class Elementwise(nn.Module):
    """Mostly elementwise work: one fusion group."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(16))

    def forward(self, x):
        y = torch.sigmoid(x * self.w + 1.0) * torch.tanh(x)
        return torch.relu(y - 0.25) * 2.0 + torch.exp(-x * x)


def example_inputs():
    """name -> (how to build the archive, the inputs), with a fixed seed."""
    torch.manual_seed(0)
    x, h = torch.rand(3, 4), torch.rand(3, 4)
    return {
        "cell": (lambda: torch.jit.script(MyCell(torch.jit.script(MyDecisionGate()))), (x, h)),
        "cell_traced": (lambda: torch.jit.trace(MyCell(torch.jit.script(MyDecisionGate())),
                                                (x, h)), (x, h)),
        "wraprnn": (lambda: torch.jit.script(WrapRNN()), (torch.randn(5, 3, 4),)),
        "lstm": (lambda: torch.jit.script(LSTMCell()),
                 (x, (torch.rand(3, 8), torch.rand(3, 8)))),
        "lstm_traced": (lambda: torch.jit.trace(LSTMCell(),
                                                (x, (torch.rand(3, 8), torch.rand(3, 8)))),
                        (x, (torch.rand(3, 8), torch.rand(3, 8)))),
        "sequential": (lambda: torch.jit.script(sequential()), (torch.randn(5, 4),)),
        "sequential_traced": (lambda: torch.jit.trace(sequential(), (torch.randn(2, 4),)),
                              (torch.randn(2, 4),)),
        "loop_function": (lambda: torch.jit.script(loop_function), (x, 4)),
        "optional_none": (lambda: torch.jit.script(OptionalArg()), (x,)),
        "optional_given": (lambda: torch.jit.script(OptionalArg()), (x, h)),
        "tied": (lambda: torch.jit.script(Tied()), (x,)),
        "elementwise": (lambda: torch.jit.script(Elementwise()), (torch.randn(8, 16),)),
    }
