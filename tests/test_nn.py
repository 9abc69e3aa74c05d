"""torchlike.nn: eager modules over numpy arrays with PyTorch's semantics.

PyTorch (when installed) is the oracle: every module is built next to its torch twin, loaded
from torch's state_dict and compared on random inputs; names, key orders, reprs and error
messages are compared as text.  The torch-free tests check the bookkeeping and the math
against numpy.
"""
from __future__ import annotations

import copy
import math
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

from torchlike import nn
from torchlike.nn import init

RTOL, ATOL = 1e-5, 1e-6


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# -- the modules against their torch twins ----------------------------------------------------

# (name, constructor arguments, input shape); the same constructor call builds both twins
CASES = [
    ("Linear", (4, 3), (2, 5, 4)),
    ("Linear", (4, 3, False), (5, 4)),
    ("Identity", (), (2, 3)),
    ("Flatten", (), (2, 3, 4)),
    ("Flatten", (0, 1), (2, 3, 4)),
    ("Unflatten", (1, (2, 3)), (4, 6)),
    ("LayerNorm", (6,), (3, 6)),
    ("LayerNorm", ((4, 6),), (2, 4, 6)),
    ("LayerNorm", (6, 1e-3, False), (3, 6)),
    ("GroupNorm", (2, 4), (3, 4, 5)),
    ("Dropout", (0.3,), (4, 5)),
    ("Dropout2d", (0.3,), (2, 3, 4, 4)),
    ("AlphaDropout", (0.3,), (4, 5)),
    ("ReLU", (), (4, 5)),
    ("ReLU6", (), (4, 5)),
    ("GELU", (), (4, 5)),
    ("GELU", ("tanh",), (4, 5)),
    ("SiLU", (), (4, 5)),
    ("Mish", (), (4, 5)),
    ("Tanh", (), (4, 5)),
    ("Sigmoid", (), (4, 5)),
    ("Softplus", (), (4, 5)),
    ("Softplus", (2.0, 1.0), (4, 5)),
    ("ELU", (0.7,), (4, 5)),
    ("SELU", (), (4, 5)),
    ("CELU", (1.3,), (4, 5)),
    ("LeakyReLU", (0.2,), (4, 5)),
    ("Hardtanh", (-0.5, 0.8), (4, 5)),
    ("Hardsigmoid", (), (4, 5)),
    ("Hardswish", (), (4, 5)),
    ("Softsign", (), (4, 5)),
    ("Tanhshrink", (), (4, 5)),
    ("Softshrink", (0.3,), (4, 5)),
    ("Hardshrink", (0.3,), (4, 5)),
    ("LogSigmoid", (), (4, 5)),
    ("Threshold", (0.1, -2.0), (4, 5)),
    ("Softmax", (1,), (4, 5)),
    ("Softmax", (), (3, 4, 5)),
    ("Softmax", (), (4, 5)),
    ("LogSoftmax", (-1,), (4, 5)),
    ("LogSoftmax", (), (5,)),
    ("Softmin", (0,), (4, 5)),
    ("Softmax2d", (), (2, 3, 4, 4)),
    ("GLU", (), (4, 6)),
    ("GLU", (0,), (4, 6)),
    ("RReLU", (0.1, 0.3), (4, 5)),
]


def _twins(torch, name, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(nn, name)(*args).eval(), getattr(torch.nn, name)(*args).eval()


def _torch_out(torch, module, x):
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return module(torch.from_numpy(x.copy())).numpy()


@pytest.mark.parametrize("name,args,shape", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_module_matches_torch(torch, name, args, shape):
    ours, theirs = _twins(torch, name, args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for p in theirs.parameters():  # non-default values, so a missed load shows
        with torch.no_grad():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = rand(*shape, seed=len(shape))
    np.testing.assert_allclose(ours(x.copy()), _torch_out(torch, theirs, x), rtol=RTOL,
                               atol=ATOL)
    ours2, _ = _twins(torch, name, args)
    ours2.load_state_dict(theirs.state_dict())  # a raw torch state_dict loads directly
    np.testing.assert_allclose(ours2(x.copy()), ours(x.copy()), rtol=0, atol=0)
    assert getattr(type(ours), "__constants__", None) == \
        getattr(type(theirs), "__constants__", None)


@pytest.mark.parametrize("name,args", [("ReLU", ()), ("ReLU6", ()), ("ELU", (0.5,)),
                                       ("SELU", ()), ("CELU", ()), ("LeakyReLU", (0.1,)),
                                       ("Hardtanh", ()), ("SiLU", ()), ("Mish", ()),
                                       ("Hardsigmoid", ()), ("Hardswish", ()),
                                       ("Threshold", (0.2, 5.0))])
def test_inplace_activations(torch, name, args):
    ours = getattr(nn, name)(*args, inplace=True)
    theirs = getattr(torch.nn, name)(*args, inplace=True)
    assert repr(ours) == repr(theirs)
    x = rand(3, 4)
    expected = _torch_out(torch, theirs, x)
    xc = x.copy()
    out = ours(xc)
    np.testing.assert_allclose(xc, expected, rtol=RTOL, atol=ATOL)  # the input was overwritten
    assert np.shares_memory(out, xc)


def test_reprs_of_options_match_torch(torch):
    for name, args in [("ReLU", (True,)), ("Hardtanh", (-2, 2, True)), ("ELU", (0.5, True)),
                       ("LeakyReLU", (0.01, True)), ("RReLU", (0.1, 0.3, True)),
                       ("Dropout", (0.2, True)), ("Dropout1d", ()), ("Dropout3d", (0.1,)),
                       ("FeatureAlphaDropout", ()), ("Softplus", (1, 20)),
                       ("LayerNorm", (4, 1e-5, True, False)), ("GroupNorm", (2, 4, 1e-3, False)),
                       ("Unflatten", (1, (2, 3))), ("Linear", (2, 3, False))]:
        ours, theirs = _twins(torch, name, args)
        assert repr(ours) == repr(theirs), name


# -- a nested model ------------------------------------------------------------------------------

def _nested(lib):
    """The same model in torchlike.nn or torch.nn: a Sequential, a custom module with a
    ModuleList, a ModuleDict and buffers, a shared submodule."""
    m = lib.nn if hasattr(lib, "nn") and hasattr(lib.nn, "Module") else lib

    class Block(m.Module):
        def __init__(self):
            super().__init__()
            self.layers = m.ModuleList([m.Linear(8, 8) for _ in range(3)] + [m.Tanh()])
            self.heads = m.ModuleDict({"mean": m.Linear(8, 2), "scale": m.Linear(8, 2, False)})
            self.register_buffer("offset", lib_full((2,), 0.5, lib))
            self.register_buffer("scratch", lib_full((2,), 0.0, lib), persistent=False)
            self.norm = m.LayerNorm(8)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            x = self.norm(x)
            return self.heads["mean"](x) + self.heads["scale"](x) + self.offset

    class Net(m.Module):
        def __init__(self):
            super().__init__()
            self.stem = m.Sequential(m.Linear(4, 8), m.LayerNorm(8), m.GELU(), m.Dropout(0.1))
            self.block = Block()
            self.alias = self.stem  # the same module under two names

        def forward(self, x):
            return self.block(self.stem(x))

    return Net()


def lib_full(shape, value, lib):
    if hasattr(lib, "from_numpy"):
        return lib.full(shape, value)
    return np.full(shape, value, np.float32)


def test_nested_model_matches_torch(torch):
    import torchlike

    theirs, ours = _nested(torch).eval(), _nested(torchlike).eval()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_modules(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_modules(remove_duplicate=False)]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.block.named_parameters(prefix="b", recurse=False)] == \
        [n for n, _ in theirs.block.named_parameters(prefix="b", recurse=False)]
    assert sorted(k for k in dir(ours) if not k.startswith("_")) == \
        sorted(k for k in dir(theirs) if not k.startswith("_")
               and k in dir(ours))  # every public name we have, torch has too
    for n in ("stem", "block", "block.layers", "block.heads.mean"):
        assert repr(ours.get_submodule(n)) == repr(theirs.get_submodule(n))
    assert ours.get_parameter("block.heads.mean.bias") is ours.block.heads["mean"].bias
    result = ours.load_state_dict(theirs.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == repr(theirs.load_state_dict(theirs.state_dict()))
    x = rand(3, 4)
    np.testing.assert_allclose(ours(x), _torch_out(torch, theirs, x), rtol=1e-5, atol=1e-5)


def test_module_list_repr_compresses_runs(torch):
    ours = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU(),
                                                                nn.Linear(2, 2)])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)]
                                 + [torch.nn.ReLU(), torch.nn.ReLU(), torch.nn.Linear(2, 2)])
    assert repr(ours) == repr(theirs)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList()) == "ModuleList()"
    assert repr(nn.Sequential()) == repr(torch.nn.Sequential())
    assert repr(nn.ModuleDict({"a": nn.ReLU()})) == repr(torch.nn.ModuleDict({"a":
                                                                              torch.nn.ReLU()}))


# -- load_state_dict --------------------------------------------------------------------------

def test_load_state_dict_errors_match_torch(torch):
    def message(module, sd, **kw):
        with pytest.raises(RuntimeError) as info:
            module.load_state_dict(sd, **kw)
        return str(info.value)

    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    sd = {"weight": np.zeros((2, 3), np.float32), "extra": np.zeros(1, np.float32),
          "sub.x": np.zeros(1, np.float32)}
    tsd = {k: torch.from_numpy(v) for k, v in sd.items()}
    got = message(ours, sd)
    assert got == message(theirs, tsd)
    assert got == ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: '
                   '"bias". \n\tUnexpected key(s) in state_dict: "extra", "sub.x". ')
    bad = {"weight": np.zeros((2, 4), np.float32), "bias": np.zeros(2, np.float32)}
    got = message(ours, bad)
    assert got == message(theirs, {k: torch.from_numpy(v) for k, v in bad.items()}).replace(
        "torch.Size([2, 4])", "(2, 4)").replace("torch.Size([2, 3])", "(2, 3)")
    assert "size mismatch for weight: copying a param with shape (2, 4) from checkpoint, " \
           "the shape in current model is (2, 3)." in got
    assert message(ours, bad, strict=False) == got  # size mismatches are errors regardless
    r = ours.load_state_dict(sd, strict=False)
    t = theirs.load_state_dict(tsd, strict=False)
    assert (r.missing_keys, r.unexpected_keys) == (t.missing_keys, t.unexpected_keys) == \
        (["bias"], ["extra", "sub.x"])
    assert r == t and repr(r) == repr(t)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        ours.load_state_dict([1, 2])


def test_load_state_dict_nested_keys(torch):
    def run(lib):
        net = lib.Sequential(lib.Linear(2, 2), lib.Sequential(lib.LayerNorm(2)))
        sd = dict(net.state_dict())
        del sd["1.0.bias"]
        one = sd["0.bias"][:1]
        sd.update({"1.0.zz": one, "2.w": one, "1.q": one})
        r = net.load_state_dict(sd, strict=False)
        return r.missing_keys, r.unexpected_keys

    assert run(nn) == run(torch.nn) == (["1.0.bias"], ["2.w", "1.q", "1.0.zz"])


def test_load_state_dict_copies_in_place():
    m = nn.Linear(3, 2)
    w, b = m.weight, m.bias
    values = {"weight": np.arange(6.0).reshape(2, 3), "bias": [7, 8]}  # float64 and a list
    m.load_state_dict(values)
    assert m.weight is w and m.bias is b
    assert w.dtype == np.float32 and b.dtype == np.float32
    np.testing.assert_array_equal(w, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(b, [7, 8])
    sd = m.state_dict()
    assert sd["weight"] is m.weight  # live arrays
    m.load_state_dict({"weight": np.ones((2, 3)), "bias": np.zeros(2)}, assign=True)
    assert m.weight is not w and m.weight.dtype == np.float64 and type(m.weight) is np.ndarray
    assert m._parameters["weight"] is m.weight
    copy_source = nn.Linear(3, 2)
    m2 = nn.Linear(3, 2)
    m2.load_state_dict(copy_source.state_dict())
    assert not np.shares_memory(m2.weight, copy_source.weight)


def test_state_dict_prefix_and_buffers():
    m = nn.Module()
    m.register_buffer("a", np.zeros(2))
    m.register_buffer("tmp", np.zeros(2), persistent=False)
    m.register_buffer("none", None)
    m.lin = nn.Linear(1, 1)
    assert list(m.state_dict(prefix="p.")) == ["p.a", "p.lin.weight", "p.lin.bias"]
    assert [n for n, _ in m.named_buffers()] == ["a", "tmp"]
    dest = OrderedDict(x=1)
    assert m.state_dict(destination=dest) is dest and list(dest)[0] == "x"


# -- attributes, registration, sharing ------------------------------------------------------------

def test_setattr_routing():
    m = nn.Module()
    p = nn.Parameter(np.ones(3, np.float32))
    m.w = p
    assert "w" in m._parameters and "w" not in m.__dict__
    assert type(m.w) is np.ndarray and np.shares_memory(m.w, p)
    m.w = np.zeros(4)  # a name that is a parameter stays one
    assert m._parameters["w"].shape == (4,)
    m.w = None
    assert m._parameters["w"] is None and m.w is None
    m.sub = nn.ReLU()
    assert m._modules["sub"] is m.sub
    m.register_buffer("b", np.zeros(1))
    m.b = np.ones(2)
    assert m._buffers["b"].shape == (2,)
    m.k = 3
    assert m.__dict__["k"] == 3
    m.sub = nn.Parameter(np.ones(1))  # a parameter replaces the submodule
    assert "sub" not in m._modules and "sub" in m._parameters
    m.b = nn.Linear(1, 1)  # a module replaces the buffer
    assert "b" not in m._buffers and "b" in m._modules
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'b'"):
        m.b = 3
    with pytest.raises(TypeError, match="as parameter 'w'"):
        m.w = nn.ReLU()
    del m.w, m.b, m.k
    assert "w" not in m._parameters and "b" not in m._modules and not hasattr(m, "k")
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        _ = m.nope
    assert "training" in m.__dict__ and m.training is True


def test_assign_before_init_and_missing_forward():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.ones(1))
            super().__init__()

    with pytest.raises(AttributeError, match=r"cannot assign parameters before "
                                             r"Module.__init__\(\) call"):
        Early()

    class EarlyModule(nn.Module):
        def __init__(self):
            self.sub = nn.ReLU()

    with pytest.raises(AttributeError, match="cannot assign module before"):
        EarlyModule()

    class NoForward(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match=r'Module \[NoForward\] is missing the '
                                                  r'required "forward" function'):
        NoForward()(1)


def test_registration_name_checks(torch):
    def errors(lib, tensor):
        m = lib.Linear(1, 1)
        out = []
        for call, bad in [
            (lambda n: m.register_buffer(n, tensor), "a.b"),
            (lambda n: m.register_buffer(n, tensor), ""),
            (lambda n: m.register_buffer(n, tensor), "weight"),
            (lambda n: m.register_buffer(n, tensor), 5),
            (lambda n: m.register_parameter(n, None), "a.b"),
            (lambda n: m.register_parameter(n, None), ""),
            (lambda n: m.register_parameter(n, None), "in_features"),
            (lambda n: m.add_module(n, lib.ReLU()), "a.b"),
            (lambda n: m.add_module(n, lib.ReLU()), ""),
            (lambda n: m.add_module(n, lib.ReLU()), "bias"),
            (lambda n: m.add_module(n, 3), "x"),
        ]:
            with pytest.raises((KeyError, TypeError)) as info:
                call(bad)
            out.append((info.type, str(info.value)))
        return out

    assert errors(nn, np.zeros(1)) == errors(torch.nn, torch.zeros(1))
    m = nn.Module()
    m.register_module("r", nn.ReLU())
    assert isinstance(m.r, nn.ReLU)


def test_parameter_sharing():
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)
    b.weight = a.weight
    seq = nn.Sequential(a, b)
    assert len(list(seq.parameters())) == 3
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    p = nn.Parameter(np.ones((2, 2), np.float32))
    c, d = nn.Module(), nn.Module()
    c.w, d.w = p, p  # one Parameter assigned twice: one parameter
    assert c.w is d.w
    assert len(list(nn.Sequential(c, d).parameters())) == 1
    seq.to(np.float64)
    assert b.weight is a.weight and a.weight.dtype == np.float64  # still shared after to()


def test_parameter_is_a_marker():
    p = nn.Parameter([1.0, 2.0])
    assert isinstance(p, np.ndarray) and isinstance(p, nn.Parameter)
    assert type(p + 1) is np.ndarray
    assert nn.Parameter().shape == (0,)
    assert repr(p).startswith("Parameter containing:")
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, nn.Parameter) and np.array_equal(q, p)


def test_get_submodule_and_parameter_errors():
    net = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(AttributeError, match="Linear has no attribute `x`"):
        net.get_submodule("0.x")
    with pytest.raises(AttributeError, match="`in_features` is not an nn.Module"):
        net.get_submodule("0.in_features")
    with pytest.raises(AttributeError, match="`in_features` is not an nn.Parameter"):
        net.get_parameter("0.in_features")
    assert net.get_submodule("") is net
    assert net.get_parameter("0.weight") is net[0].weight


def test_train_eval_recursion_and_apply():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.ModuleList([nn.ReLU()])))
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(1)
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Dropout", "ReLU", "ModuleList", "Sequential", "Sequential"]


def test_to_converts_floating_arrays():
    m = nn.Linear(2, 3)
    m.register_buffer("count", np.zeros((), np.int64))
    assert m.to(np.float64) is m
    assert m.weight.dtype == m.bias.dtype == np.float64 and m.count.dtype == np.int64
    m.to("float32")
    assert m.weight.dtype == np.float32
    assert m.half().weight.dtype == np.float16
    assert m.double().bias.dtype == np.float64
    assert m.float().weight.dtype == np.float32
    m.to("cpu")
    m.to(dtype=np.float64, device="cpu")
    assert m.weight.dtype == np.float64
    with pytest.raises(TypeError, match="only accepts floating point"):
        m.to(np.int32)
    x = rand(4, 2).astype(np.float64)
    assert m(x).dtype == np.float64


def test_copy_and_pickle():
    net = nn.Sequential(nn.Linear(2, 3), nn.GELU())
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert repr(clone) == repr(net)
        assert not np.shares_memory(clone[0].weight, net[0].weight)
        x = rand(2, 2)
        np.testing.assert_array_equal(clone(x), net(x))


# -- containers ---------------------------------------------------------------------------------

def test_sequential_api():
    a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Tanh()
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    assert isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    assert list(s[1:]._modules) == ["1", "2"]  # slices keep their keys, as PyTorch's
    s.append(nn.Identity())
    assert len(s) == 4 and list(s._modules) == ["0", "1", "2", "3"]
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and s[1] is c
    s[0] = b
    assert s[0] is b
    s.insert(0, a)
    assert list(s)[:2] == [a, b]
    named = nn.Sequential(OrderedDict([("fc", a), ("act", c)]))
    assert list(named._modules) == ["fc", "act"] and named.fc is a
    assert len(named + nn.Sequential(b)) == 3 and len(named * 2) == 4
    with pytest.raises(IndexError, match="index 5 is out of range"):
        s[5]
    x = rand(3, 2)
    np.testing.assert_allclose(nn.Sequential(a, c)(x), np.tanh(x @ a.weight.T + a.bias),
                               rtol=RTOL, atol=ATOL)


def test_module_list_api():
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    layers += [nn.Sigmoid()]
    layers.append(nn.Identity())
    layers.extend([nn.GELU()])
    layers.insert(1, nn.SiLU())
    assert [type(m).__name__ for m in layers] == ["ReLU", "SiLU", "Tanh", "Sigmoid", "Identity",
                                                  "GELU"]
    assert len(layers) == 6 and isinstance(layers[-1], nn.GELU)
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    del layers[0]
    assert list(layers._modules) == [str(i) for i in range(5)]
    assert isinstance(layers.pop(0), nn.SiLU) and len(layers) == 4
    both = layers + nn.ModuleList([nn.ReLU()])
    assert len(both) == 5
    with pytest.raises(IndexError):
        layers[10]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        layers.extend(3)


def test_module_dict_api():
    d = nn.ModuleDict({"a": nn.ReLU()})
    d["b"] = nn.Tanh()
    d.update([("c", nn.Sigmoid())])
    d.update(nn.ModuleDict({"e": nn.GELU()}))
    assert list(d) == list(d.keys()) == ["a", "b", "c", "e"] and len(d) == 4
    assert "b" in d and isinstance(d["c"], nn.Sigmoid)
    assert [type(v).__name__ for v in d.values()] == ["ReLU", "Tanh", "Sigmoid", "GELU"]
    assert isinstance(d.pop("a"), nn.ReLU) and "a" not in d
    del d["b"]
    assert list(d.items())[0][0] == "c"
    d.clear()
    assert len(d) == 0
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        d.update([("x",)])


# -- init, dropout, numerics without torch -------------------------------------------------------

def test_linear_default_init_bounds():
    init.manual_seed(0)
    m = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    assert m.weight.shape == (50, 100) and m.bias.shape == (50,)
    assert m.weight.dtype == np.float32
    assert np.abs(m.weight).max() <= bound and np.abs(m.bias).max() <= bound
    assert np.abs(m.weight).max() > 0.95 * bound  # uniform over the whole range
    assert abs(m.weight.std() - bound / math.sqrt(3)) < 0.01 * bound * 5
    init.manual_seed(0)
    np.testing.assert_array_equal(nn.Linear(100, 50).weight, m.weight)  # reproducible
    assert nn.Linear(2, 2, dtype=np.float64).weight.dtype == np.float64
    assert nn.Linear(3, 2, bias=False).bias is None


def test_init_functions():
    w = np.empty((64, 32), np.float32)
    assert init.zeros_(w) is w and not w.any()
    assert init.ones_(w).all() and init.constant_(w, 2.5).min() == 2.5
    init.xavier_uniform_(w)
    assert np.abs(w).max() <= math.sqrt(6 / 96)
    init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.std() - math.sqrt(2 / 32)) < 0.02
    init.eye_(w)
    assert w[3, 3] == 1 and w.sum() == 32
    init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert np.abs(w).max() <= 0.5
    init.orthogonal_(w)
    np.testing.assert_allclose(w.T @ w, np.eye(32), atol=1e-5)
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(1 / 3)


def test_linear_and_layer_norm_reference_math():
    lin = nn.Linear(4, 3)
    x = rand(2, 4)
    np.testing.assert_allclose(lin(x), x @ lin.weight.T + lin.bias, rtol=RTOL, atol=ATOL)
    ln = nn.LayerNorm(4)
    ln.weight[...] = [1, 2, 3, 4]
    ln.bias[...] = 0.5
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(ln(x), (x - mu) / np.sqrt(var + 1e-5) * ln.weight + 0.5,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(nn.GELU("tanh")(x), 0.5 * x * (1 + np.tanh(
        math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.Softsign()(x), x / (1 + np.abs(x)), rtol=RTOL)


def test_dropout_training_statistics():
    init.manual_seed(1)
    d = nn.Dropout(0.3)
    x = np.ones((400, 500), np.float32)
    y = d(x)
    assert y.dtype == np.float32 and y.shape == x.shape
    assert abs((y == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(y[y != 0], 1 / 0.7, rtol=1e-6)
    assert abs(y.mean() - 1) < 0.01
    assert (x == 1).all()  # not in place
    assert d.eval()(x) is x  # eval: the identity
    init.manual_seed(1)
    np.testing.assert_array_equal(nn.Dropout(0.3)(x), y)
    assert nn.Dropout(0.0)(x) is x
    assert not nn.Dropout(1.0)(x).any()
    xi = np.ones((10, 10), np.float32)
    out = nn.Dropout(0.5, inplace=True)(xi)
    assert out is xi and ((xi == 0) | (xi == 2)).all()
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                             f"but got {p}"):
            nn.Dropout(p)


def test_feature_and_alpha_dropout_training():
    init.manual_seed(2)
    x = np.ones((8, 16, 5, 5), np.float32)
    y = nn.Dropout2d(0.5)(x)
    per_channel = y.reshape(8, 16, -1)
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.3 < (y == 0).mean() < 0.7
    y1 = nn.Dropout1d(0.5)(np.ones((16, 7), np.float32))  # unbatched (C, L)
    assert (y1.min(-1) == y1.max(-1)).all()
    y3 = nn.Dropout3d(0.5)(np.ones((16, 2, 3, 3), np.float32))  # unbatched (C, D, H, W)
    assert (y3.reshape(16, -1).min(-1) == y3.reshape(16, -1).max(-1)).all()
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        nn.Dropout1d()(np.ones(3, np.float32))
    z = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    a = nn.AlphaDropout(0.2)(z)
    assert abs(a.mean()) < 0.01 and abs(a.std() - 1) < 0.01  # SELU's fixed point is kept
    assert abs(nn.FeatureAlphaDropout(0.2)(z[:, :, None]).std() - 1) < 0.02


def test_rrelu_training_slopes():
    x = -np.ones((100, 100), np.float32)
    y = nn.RReLU(0.1, 0.3)(x)
    assert (y <= -0.1).all() and (y >= -0.3).all() and y.std() > 0.03
    np.testing.assert_allclose(nn.RReLU(0.1, 0.3).eval()(x), -0.2, rtol=1e-6)
    pos = np.ones(3, np.float32)
    np.testing.assert_array_equal(nn.RReLU()(pos), pos)


def test_torch_free_activation_values():
    x = np.array([-2.0, -0.25, 0.0, 0.25, 2.0], np.float32)
    np.testing.assert_array_equal(nn.ReLU6()(x * 4), np.clip(x * 4, 0, 6))
    np.testing.assert_array_equal(nn.Hardshrink(0.5)(x), [-2, 0, 0, 0, 2])
    np.testing.assert_allclose(nn.Softshrink(0.5)(x), [-1.5, 0, 0, 0, 1.5])
    np.testing.assert_array_equal(nn.Threshold(0.1, 9.0)(x), [9, 9, 9, 0.25, 2])
    np.testing.assert_allclose(nn.Softmax(0)(x).sum(), 1, rtol=1e-6)
    np.testing.assert_allclose(nn.Tanhshrink()(x), x - np.tanh(x), rtol=1e-6, atol=1e-7)
    with pytest.raises(AssertionError):
        nn.Hardtanh(1.0, 0.5)


# -- the forwards stay in the scripter's subset ---------------------------------------------------

@pytest.mark.parametrize("module", [
    nn.ReLU(), nn.ReLU(True), nn.ReLU6(), nn.GELU("tanh"), nn.SiLU(), nn.Mish(), nn.Tanh(),
    nn.Sigmoid(), nn.Softplus(2.0, 10.0), nn.ELU(0.5), nn.SELU(), nn.CELU(), nn.LeakyReLU(0.2),
    nn.Hardtanh(-2.0, 2.0), nn.Hardsigmoid(), nn.Hardswish(), nn.Softsign(), nn.Tanhshrink(),
    nn.Softshrink(), nn.Hardshrink(), nn.LogSigmoid(), nn.Threshold(0.1, 20.0), nn.Softmax(1),
    nn.Softmax(), nn.LogSoftmax(), nn.Softmin(1), nn.Softmax2d(), nn.GLU(), nn.RReLU(),
    nn.Identity(), nn.Flatten(), nn.Dropout(), nn.Dropout2d(), nn.AlphaDropout(),
    nn.FeatureAlphaDropout()], ids=repr)
def test_parameter_free_forwards_script(module):
    """``script_graph(module.forward)`` compiles the same call (a module in eval mode; self's
    scalar attributes are constants), and the graph computes what the module does."""
    from torchlike.frontend.script import script_graph
    from torchlike.interpreter import run

    module.eval()
    x = rand(2, 4, 2)
    np.testing.assert_allclose(run(script_graph(module.forward), x.copy()), module(x.copy()),
                               rtol=RTOL, atol=ATOL)
