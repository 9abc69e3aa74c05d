"""Transformer and normalization modules PyTorch scripts and saves (``torch.jit.save``), loaded
by ``jit.load`` and called with numpy inputs, against the modules themselves: what their
archive code needs -- TorchScript's ``Optional`` unification across an ``if``, a module's
underscore attributes (``self._qkv_same_embed_dim``), ``annotate(Dict[str, Tensor], {})``
(torch.overrides' checks), ``torch.add`` of two lists, and the encoder layer's fast path
``aten::_transformer_encoder_layer_fwd`` (``ops/attention.py``).
"""
import numpy as np
import pytest

from torchlike import jit
from torchlike.ir import parse_graph

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::UserWarning")


def saved(torch, module, tmp_path, name):
    path = tmp_path / f"{name}.pt"
    torch.jit.save(torch.jit.script(module.eval()), str(path))
    return jit.load(path)


@pytest.mark.parametrize("activation,norm_first", [("relu", False), ("gelu", False),
                                                   ("gelu", True)])
def test_transformer_encoder_layer(torch, tmp_path, activation, norm_first):
    torch.manual_seed(0)
    m = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True,
                                         activation=activation, norm_first=norm_first)
    loaded = saved(torch, m, tmp_path, "encoder")
    x = torch.randn(2, 5, 16)
    padding = torch.tensor([[False] * 5, [False, False, False, True, True]])
    with torch.no_grad():
        plain, masked = m.eval()(x).numpy(), m(x, src_key_padding_mask=padding).numpy()
    got = loaded(x.numpy())
    assert got.dtype == np.float32 and got.shape == plain.shape
    np.testing.assert_allclose(got, plain, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(loaded(x.numpy(), None, padding.numpy()), masked, rtol=1e-5,
                               atol=2e-6)


def test_group_norm_module(torch, tmp_path):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv1d(4, 8, 3), torch.nn.GroupNorm(2, 8),
                            torch.nn.SiLU())
    loaded = saved(torch, m, tmp_path, "group_norm")
    x = torch.randn(2, 4, 10)
    with torch.no_grad():
        want = m(x).numpy()
    np.testing.assert_allclose(loaded(x.numpy()), want, rtol=1e-5, atol=1e-6)


def test_optional_unification_across_an_if():
    # what TorchScript prints for `y = None if c else x` read back: Tensor? on the merge
    from torchlike.frontend.script_values import unify
    from torchlike.ir.types import INT, NONE, TENSOR, OptionalType
    assert unify(NONE, TENSOR) == OptionalType(TENSOR)
    assert unify(TENSOR, OptionalType(TENSOR)) == OptionalType(TENSOR)
    assert unify(OptionalType(INT), NONE) == OptionalType(INT)
    assert unify(INT, TENSOR) is None
    g = parse_graph("graph(%d : Dict(str, Tensor)):\n  %n : int = aten::len(%d)\n"
                    "  return (%n)\n")
    assert jit.run(g, {}) == 0


class TinyViT:
    """Patches by a strided convolution, a class token, an nn.TransformerEncoder of two gelu
    layers (whose scripted code holds the nested-tensor fast path torchlike lacks, never taken
    here), a final layer norm and a linear head."""

    @staticmethod
    def build(torch):
        nn = torch.nn

        class ViT(nn.Module):
            def __init__(self):
                super().__init__()
                self.patch = nn.Conv2d(3, 16, 4, 4)
                self.cls = nn.Parameter(torch.randn(1, 1, 16))
                self.pos = nn.Parameter(torch.randn(1, 5, 16))
                layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True,
                                                   activation="gelu")
                self.enc = nn.TransformerEncoder(layer, 2)
                self.norm = nn.LayerNorm(16)
                self.head = nn.Linear(16, 10)

            def forward(self, x):
                p = self.patch(x).flatten(2).transpose(1, 2)
                t = torch.cat([self.cls.expand(x.size(0), -1, -1), p], 1) + self.pos
                return self.head(self.norm(self.enc(t))[:, 0])
        return ViT()


def test_vision_transformer_and_interpolating_unet(torch, tmp_path):
    torch.manual_seed(0)
    F = torch.nn.functional

    class UNetish(torch.nn.Module):  # F.interpolate's code holds antialiased modes, not taken
        def __init__(self):
            super().__init__()
            self.d = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.u = torch.nn.ConvTranspose2d(8, 8, 2, stride=2)
            self.o = torch.nn.Conv2d(11, 2, 1)

        def forward(self, x):
            y = F.silu(self.d(x))
            z = self.u(y) + F.interpolate(y, scale_factor=2.0, mode="nearest")
            return torch.sigmoid(self.o(torch.cat([z, x], 1)))

    for name, m, x in (("vit", TinyViT.build(torch), torch.randn(2, 3, 8, 8)),
                       ("unet", UNetish(), torch.randn(1, 3, 8, 8))):
        loaded = saved(torch, m, tmp_path, name)
        with torch.no_grad():
            want = m(x).numpy()
        np.testing.assert_allclose(loaded(x.numpy()), want, rtol=1e-4, atol=1e-5)
