"""Saved modules whose code grows a list (``torch.append(feats, y)`` in a ModuleList loop, a
DenseNet block) or takes and returns dicts (``x["a"]``, ``torch._set_item(out, k, v)``, a
traced ``{"a": ..., "b": ...}`` literal), loaded by ``jit.load`` and compared with PyTorch;
and the same idioms in functions torchlike scripts itself."""
import numpy as np
import pytest

from torchlike import jit

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]


def _classes(torch):
    nn, F = torch.nn, torch.nn.functional
    from typing import Dict

    class Dense(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Conv2d(4 + 4 * i, 4, 3, padding=1) for i in range(3)])

        def forward(self, x):
            feats = [x]
            for layer in self.layers:
                feats.append(F.relu(layer(torch.cat(feats, 1))))
            return torch.cat(feats, 1)

    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})

        def forward(self, x: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
            out: Dict[str, torch.Tensor] = {}
            for k, m in self.heads.items():
                out[k] = torch.tanh(m(x[k]))
            return out

    return Dense, Heads


def _load(torch, compiled, tmp_path):
    path = tmp_path / "m.pt"
    torch.jit.save(compiled, str(path))
    return jit.load(path)


@pytest.mark.parametrize("mode", ["script", "trace"])
def test_module_list_loop_growing_a_list(torch, tmp_path, mode):
    torch.manual_seed(0)
    m = _classes(torch)[0]().eval()
    x = torch.randn(2, 4, 6, 6)
    compiled = torch.jit.script(m) if mode == "script" else torch.jit.trace(m, (x,))
    got = _load(torch, compiled, tmp_path)(x.numpy())
    with torch.no_grad():
        want = m(x).numpy()
    assert got.shape == (2, 16, 6, 6)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["script", "trace"])
def test_dict_inputs_and_outputs(torch, tmp_path, mode):
    torch.manual_seed(0)
    m = _classes(torch)[1]().eval()
    x = {"a": torch.randn(2, 4), "b": torch.randn(2, 4)}
    compiled = torch.jit.script(m) if mode == "script" else \
        torch.jit.trace(m, (x,), strict=False)
    got = _load(torch, compiled, tmp_path)({k: v.numpy() for k, v in x.items()})
    with torch.no_grad():
        want = m(x)
    assert isinstance(got, dict) and sorted(got) == ["a", "b"]
    for k in want:
        np.testing.assert_allclose(got[k], want[k].numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(Exception, match="'b'"):  # a missing key names it
        _load(torch, compiled, tmp_path)({"a": x["a"].numpy()})


def dict_literal(x, y):
    d = {"x": x * 2, "y": y + 1}
    return d["x"] - d["y"]


def test_scripted_functions_with_dict_literals():
    s = jit.script(dict_literal)
    x, y = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    np.testing.assert_array_equal(s(x, y), x * 2 - (y + 1))
    assert "prim::DictConstruct" in str(s.graph)
