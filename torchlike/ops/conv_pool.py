"""Convolution and pooling: the ops a CNN's graph holds between its elementwise work, interpreted
(numpy or cupy) with PyTorch's semantics, dtypes and checks::

    %c : Tensor = aten::conv2d(%x, %w, %b, %stride, %padding, %dilation, %groups)
    %s : Tensor = aten::conv2d(%x, %w, %none, %stride, %same, %dilation, %groups)  # str padding
    %t : Float(2, 4, 4, 4) = aten::_convolution(%x, %w, %b, %st, %pad, %dil, %false, %opad,
                                                 %groups, %false, %false, %true, %true)  # traced
    %p : Tensor = aten::max_pool2d(%r, %kernel, %empty, %pad, %dil, %ceil_mode)
    %a : Tensor = aten::adaptive_avg_pool2d(%p, %size)

* convolution: ``conv1d``, ``conv2d``, ``conv3d`` (int or ``"valid"``/``"same"`` padding, batched or
  unbatched input, groups), and what traces print: ``_convolution``, ``convolution`` and
  ``_convolution_mode`` (batched, any number of spatial dims); transposed:
  ``conv_transpose1d/2d/3d`` and ``_convolution(transposed=True)``, as the convolution they are
  the gradient of.  An im2col gather -- a strided window view of the padded input, copied
  once -- then one matmul per group; float16 accumulates in float32 and integers in int64,
  rounded or wrapped back to the input's dtype as PyTorch's CPU kernels do;
* pooling: ``max_pool1d/2d/3d`` (``-inf`` padding, NaN wins) and their ``_with_indices``
  forms, ``avg_pool1d/2d/3d`` (``count_include_pad``, ``divisor_override``; int64 truncates),
  and the adaptive ``avg`` and ``max`` pools (1-3d), ATen's bins
  ``[floor(i*L/o), ceil((i+1)*L/o))``;
* ``F.max_pool2d`` & co. are Python functions that a scripted caller reaches through
  ``prim::CallFunction`` (``_max_pool2d``, ``adaptive_avg_pool2d``, ...): PyTorch's own graphs
  of them are in the nn function table (``ops/nn_functions.py``), so the interpreter runs them
  and the inliner turns them into the ops.

Output sizes follow ATen's ``pooling_output_shape``: with ``ceil_mode`` the last window must
start inside the input or its left padding.  None of these ops is elementwise: the fuser leaves
them to the interpreter and fuses the bias adds and activations around them.
"""
from __future__ import annotations

import math

import numpy as np

from .registry import defop, is_int_literal
from .tensor_common import arg, compute_dtype, like, tensor_in


def _ints(value, n, bad):
    """An ``int[n]`` argument (an int, or a list of 1 or n ints) as an n-tuple; otherwise a
    RuntimeError with the message ``bad(value)``."""
    vals = [value] if is_int_literal(value) else value
    if not isinstance(vals, (list, tuple)) or not all(is_int_literal(v) for v in vals) \
            or len(vals) not in (1, n):
        raise RuntimeError(bad(value))
    return tuple(int(v) for v in vals) * (n if len(vals) == 1 else 1)


def _acc_dtype(dtype):
    """The dtype a sum of products runs in: float16 in float32 (PyTorch's opmath), integers in
    int64 (two's-complement wrap-around makes the final cast agree with narrower sums)."""
    return np.dtype("int64" if dtype.kind in "iu" else compute_dtype(str(dtype)))


def _windows(xp, a, eff, stride, dilation, out):
    """A strided view of ``a``'s windows over its last ``len(eff)`` axes, shape
    ``(..., *out, *kernel)``: every ``stride``-th window start, every ``dilation``-th tap."""
    n = len(eff)
    view = xp.lib.stride_tricks.sliding_window_view(a, tuple(eff),
                                                    axis=tuple(range(a.ndim - n, a.ndim)))
    return view[(Ellipsis,) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride))
                + tuple(slice(None, None, d) for d in dilation)]


# -- convolution ---------------------------------------------------------------------------------

def _conv_bad(name, n):
    return lambda got: (f"expected {name} to be a single integer value or a list of {n} values "
                        f"to match the convolution dimensions, but got {name}={got}")


def _conv_geometry(spatial, kernel, stride, padding, dilation):
    """(pads [(left, right)], stride, dilation, output sizes) of a convolution, with ATen's
    argument checks.  ``"same"`` puts the odd pad on the right, as ATen does."""
    n = len(kernel)
    s, d = _ints(stride, n, _conv_bad("stride", n)), _ints(dilation, n, _conv_bad("dilation", n))
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(v != 1 for v in s):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [di * (k - 1) if padding == "same" else 0 for di, k in zip(d, kernel)]
        pads = [(t // 2, t - t // 2) for t in total]
    else:
        pads = [(q, q) for q in _ints(padding, n, _conv_bad("padding", n))]
    if any(v <= 0 for v in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(lo < 0 for lo, _ in pads):
        raise RuntimeError("negative padding is not supported")
    if any(v <= 0 for v in d):
        raise RuntimeError("non-positive dilation is not supported")
    eff = [di * (k - 1) + 1 for di, k in zip(d, kernel)]
    padded = [size + lo + hi for size, (lo, hi) in zip(spatial, pads)]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                           f"actual input size")
    return pads, s, d, tuple((p - e) // si + 1 for p, e, si in zip(padded, eff, s))


def _convolve(xp, op, x, w, b, stride, padding, dilation, groups):
    """Convolution of a batched ``x`` (N, C, *spatial) with ``w`` (O, C / groups, *kernel)."""
    if x.ndim != w.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
                           f"{list(w.shape)}, but got {x.ndim}-dimensional input of size "
                           f"{list(x.shape)} instead")
    if x.dtype.kind == "b":
        raise NotImplementedError(f"\"{op}\" not implemented for 'bool'")
    for what, t in (("weight", w), ("bias", b)):
        if t is not None and t.dtype != x.dtype:
            raise RuntimeError(f"Input type ({x.dtype}) and {what} type ({t.dtype}) should be "
                               f"the same")
    n, (N, C), O = w.ndim - 2, x.shape[:2], w.shape[0]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if O == 0 or O % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"(and at least 1) at dimension 0, but got weight of size "
                           f"{list(w.shape)} instead")
    if C != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[1] * groups} channels, but "
                           f"got {C} channels instead")
    if b is not None and (b.ndim != 1 or b.shape[0] != O):
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be "
                           f"1-dimensional with {O} elements, but got bias of size "
                           f"{list(b.shape)} instead")
    kernel = w.shape[2:]
    pads, s, d, out = _conv_geometry(x.shape[2:], kernel, stride, padding, dilation)
    comp = _acc_dtype(x.dtype)
    xc = x.astype(comp, copy=False)
    if any(lo or hi for lo, hi in pads):
        xc = xp.pad(xc, [(0, 0), (0, 0)] + pads)
    win = _windows(xp, xc, [di * (k - 1) + 1 for di, k in zip(d, kernel)], s, d, out)
    # im2col: (N, G, C/G, *out, *kernel) -> (G, N * pixels, C/G * taps), the one copy; then a
    # matmul per group (batched over G) with the weight as (G, C/G * taps, O/G).
    G, P, K = groups, math.prod(out), (C // groups) * math.prod(kernel)
    cols = win.reshape((N, G, C // G) + win.shape[2:])
    cols = cols.transpose((1, 0) + tuple(range(3, 3 + n)) + (2,) + tuple(range(3 + n, 3 + 2 * n)))
    wm = w.astype(comp, copy=False).reshape(G, O // G, K).transpose(0, 2, 1)
    y = xp.matmul(cols.reshape(G, N * P, K), wm)
    y = y.reshape((G, N) + out + (O // G,)).transpose((1, 0, 2 + n) + tuple(range(2, 2 + n)))
    y = y.reshape((N, O) + out)
    if b is not None:
        y = y + b.astype(comp, copy=False).reshape((O,) + (1,) * n)
    return xp.ascontiguousarray(y.astype(x.dtype, copy=False))  # matmul's layout is NHWC


def _conv(n):
    name = f"conv{n}d"

    def impl(xp, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if x.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{name}, but got input of size: {list(x.shape)}")
        if weight.ndim != n + 2:
            raise RuntimeError(f"{name}: expected a {n + 2}-D weight (out_channels, in_channels "
                               f"/ groups, *kernel_size), but got weight of size "
                               f"{list(weight.shape)}")
        batched = x.ndim == n + 2
        y = _convolve(xp, name, x if batched else x[None], weight, bias, stride, padding,
                      dilation, groups)
        return y if batched else y[0]
    return impl


def _transposed(xp, x, w, b, stride, padding, output_padding, groups, dilation):
    """A transposed convolution of a batched ``x`` (N, C, *spatial) with ``w`` (C, O / groups,
    *kernel) as the convolution it is the gradient of: the input spread ``stride`` apart, padded
    by ``dilation * (k - 1)``, convolved with the kernel flipped and its channel dims swapped
    (per group); the full result is then cut by ``padding`` on each side and extended by
    ``output_padding`` on the right: (L - 1) s - 2 p + d (k - 1) + output_padding + 1."""
    n = w.ndim - 2
    bad = _conv_bad("output_padding", n)
    s, p = _ints(stride, n, _conv_bad("stride", n)), _ints(padding, n, _conv_bad("padding", n))
    d, op = _ints(dilation, n, _conv_bad("dilation", n)), _ints(output_padding, n, bad)
    if groups <= 0 or x.ndim != n + 2 or x.shape[1] != w.shape[0] or w.shape[0] % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[0]} channels (and groups="
                           f"{groups} to divide them)")
    if any(v <= 0 for v in s + d) or any(v < 0 for v in p):
        raise RuntimeError("non-positive stride or dilation, or negative padding, is not "
                           "supported")
    if any(o >= si and o >= di for o, si, di in zip(op, s, d)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                           f"but got output_padding={list(op)}, stride={list(s)}, dilation="
                           f"{list(d)}")
    N, C, G = x.shape[0], x.shape[1], groups
    spread = xp.zeros((N, C) + tuple((size - 1) * si + 1 for size, si in zip(x.shape[2:], s)),
                      x.dtype)
    spread[(slice(None), slice(None)) + tuple(slice(None, None, si) for si in s)] = x
    kernel = w.shape[2:]
    flipped = w[(slice(None), slice(None)) + (slice(None, None, -1),) * n]
    o_g = w.shape[1]
    wt = flipped.reshape((G, C // G, o_g) + kernel).swapaxes(1, 2).reshape(
        (G * o_g, C // G) + kernel)
    full = _convolve(xp, "conv_transpose", spread, xp.ascontiguousarray(wt), None, 1,
                     [di * (k - 1) for di, k in zip(d, kernel)], d, G)
    out = [(size - 1) * si - 2 * pi + di * (k - 1) + oi + 1
           for size, si, pi, di, k, oi in zip(x.shape[2:], s, p, d, kernel, op)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: {list(x.shape[2:])}, the calculated "
                           f"output size {out} is too small")
    extra = [(0, max(0, pi + o - f)) for pi, o, f in zip(p, out, full.shape[2:])]
    if any(hi for _, hi in extra):  # output_padding past the full result: zeros there
        full = xp.pad(full, [(0, 0), (0, 0)] + extra)
    y = full[(slice(None), slice(None)) + tuple(slice(pi, pi + o) for pi, o in zip(p, out))]
    if b is not None:
        y = y + b.astype(y.dtype).reshape((-1,) + (1,) * n)
    return xp.ascontiguousarray(y.astype(x.dtype, copy=False))


def _conv_transpose(n):
    name = f"conv_transpose{n}d"

    def impl(xp, x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
             dilation=1):
        if x.ndim not in (n + 1, n + 2) or weight.ndim != n + 2:
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{name}, but got input of size: {list(x.shape)}")
        batched = x.ndim == n + 2
        y = _transposed(xp, x if batched else x[None], weight, bias, stride, padding,
                        output_padding, groups, dilation)
        return y if batched else y[0]
    return impl


def _convolution(xp, x, weight, bias, stride, padding, dilation, transposed=False,
                 output_padding=(), groups=1, *flags):
    """``_convolution`` and ``convolution`` (the flags -- benchmark, deterministic, cudnn,
    tf32 -- choose kernels, not results); ``_convolution_mode`` has only the first six."""
    if transposed:
        return _transposed(xp, x, weight, bias, stride, padding, output_padding, groups,
                           dilation)
    if weight.ndim < 3:
        raise RuntimeError(f"weight should have at least three dimensions, got weight of size "
                           f"{list(weight.shape)}")
    return _convolve(xp, "convolution", x, weight, bias, stride, padding, dilation, groups)


def _infer_conv(n):
    """Output type: the input's dtype; the shape where input, weight and geometry are known
    (``n`` spatial dims, or None: the weight's rank says)."""
    def infer(node, types):
        x, w = tensor_in(types, 0), tensor_in(types, 1)
        shape = None
        # aten::convolution / _convolution carry ``transposed`` (input 6): a transposed
        # convolution's geometry, or unknown when the flag is not a constant
        transposed = arg(node, 6, False) if node.kind in _FLAGGED else False
        try:
            k = n if n is not None else w.rank - 2
            if transposed is False:
                out = _conv_geometry(x.shape[-k:], w.shape[2:], arg(node, 3), arg(node, 4),
                                     arg(node, 5))[3]
                channels = w.shape[0]
            elif transposed is True:
                out = _transposed_sizes(x.shape[-k:], w.shape[2:], arg(node, 3), arg(node, 4),
                                        arg(node, 5), arg(node, 7))
                channels = w.shape[1] * arg(node, 8)
            else:
                raise TypeError("transposed unknown")
            if x.rank in (k + 1, k + 2) and w.rank == k + 2:
                shape = tuple(x.shape[:-k - 1]) + (channels,) + tuple(out)
        except (RuntimeError, TypeError):  # unknown shapes or arguments (None, UNKNOWN)
            pass
        return [like(x, x.dtype, shape)]
    return infer


_FLAGGED = ("aten::convolution", "aten::_convolution")


def _infer_conv_transpose(n):
    """conv_transpose{n}d(input, weight, bias, stride, padding, output_padding, groups,
    dilation): the shape where everything is known."""
    def infer(node, types):
        x, w = tensor_in(types, 0), tensor_in(types, 1)
        shape = None
        try:
            out = _transposed_sizes(x.shape[-n:], w.shape[2:], arg(node, 3, 1), arg(node, 4, 0),
                                    arg(node, 7, 1), arg(node, 5, 0))
            if x.rank in (n + 1, n + 2) and w.rank == n + 2:
                shape = tuple(x.shape[:-n - 1]) + (w.shape[1] * arg(node, 6, 1),) + tuple(out)
        except (RuntimeError, TypeError):
            pass
        return [like(x, x.dtype, shape)]
    return infer


def _transposed_sizes(spatial, kernel, stride, padding, dilation, output_padding):
    """A transposed convolution's output sizes: (in - 1) s - 2 p + d (k - 1) + op + 1."""
    m = len(kernel)
    s, p, d, o = (_ints(v, m, _conv_bad(name, m)) for v, name in (
        (stride, "stride"), (padding, "padding"), (dilation, "dilation"),
        (output_padding, "output_padding")))
    return [(i - 1) * si - 2 * pi + di * (k - 1) + oi + 1
            for i, k, si, pi, di, oi in zip(spatial, kernel, s, p, d, o)]


_CONV = ("Tensor input, Tensor weight, Tensor? bias=None, int[{n}] stride={one}, "
         "int[{n}] padding={zero}, int[{n}] dilation={one}, int groups=1")
for _n in (1, 2, 3):
    defop(f"aten::conv{_n}d", _CONV.format(n=_n, one=[1] * _n, zero=[0] * _n), _conv(_n),
          infer=_infer_conv(_n))
_CONV_T = ("Tensor input, Tensor weight, Tensor? bias=None, int[{n}] stride={one}, "
           "int[{n}] padding={zero}, int[{n}] output_padding={zero}, int groups=1, "
           "int[{n}] dilation={one}")
for _n in (1, 2, 3):
    defop(f"aten::conv_transpose{_n}d", _CONV_T.format(n=_n, one=[1] * _n, zero=[0] * _n),
          _conv_transpose(_n), infer=_infer_conv_transpose(_n))
_CONV_ND = "Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation"
defop("aten::_convolution", f"{_CONV_ND}, bool transposed, int[] output_padding, int groups, "
      "bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32=True",
      _convolution, infer=_infer_conv(None))
defop("aten::convolution", f"{_CONV_ND}, bool transposed, int[] output_padding, int groups",
      _convolution, infer=_infer_conv(None))
defop("aten::_convolution_mode", "Tensor input, Tensor weight, Tensor? bias, int[] stride, "
      "str padding, int[] dilation, int groups",
      lambda xp, x, w, b, s, p, d, g: _convolution(xp, x, w, b, s, p, d, False, (), g),
      infer=_infer_conv(None))


# -- pooling -------------------------------------------------------------------------------------

def _pool_bad(name, n, what):
    if n == 1:
        return lambda got: (f"{name}() {what} must be an int, list of ints or tuple of ints of "
                            f"size 1 but got {got}")
    count = "two" if n == 2 else "three"
    return lambda got: f"{name}: {what} must either be a single int, or a tuple of {count} ints"


def _pool_geometry(name, n, spatial, kernel_size, stride, padding, dilation, ceil_mode):
    """(kernel, stride, padding, dilation, output sizes) of a pooling, with ATen's checks."""
    k = _ints(kernel_size, n, _pool_bad(name, n, "kernel_size"))
    omitted = stride is None or (isinstance(stride, (list, tuple)) and not stride)
    s = k if omitted else _ints(stride, n, _pool_bad(name, n, "stride"))
    p = _ints(padding, n, _pool_bad(name, n, "padding"))
    d = _ints(dilation, n, _pool_bad(name, n, "dilation"))
    for what, vals, least in (("kernel_size", k, 1), ("stride", s, 1), ("padding", p, 0),
                              ("dilation", d, 1)):
        if any(v < least for v in vals):
            must = "be greater than zero" if least else "be non-negative"
            raise RuntimeError(f"{name}() {what} must {must}, but got {list(vals)}")
    if any(pi > ki // 2 for pi, ki in zip(p, k)):
        raise RuntimeError(f"{name}() pad should be at most half of kernel size, but got "
                           f"pad={list(p)} and kernel_size={list(k)}")
    out = []
    for size, ki, si, pi, di in zip(spatial, k, s, p, d):
        o = (size + 2 * pi - di * (ki - 1) - 1 + (si - 1 if ceil_mode else 0)) // si + 1
        if ceil_mode and (o - 1) * si >= size + pi:  # the last window starts in right padding
            o -= 1
        out.append(o)
    return k, s, p, d, tuple(out)


def _pool_setup(name, n, x, kernel_size, stride, padding, dilation, ceil_mode):
    if x.ndim not in (n + 1, n + 2) or 0 in x.shape[-n - 1:]:
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D (batch mode) tensor with "
                           f"optional 0 dim batch size for input, but got: {list(x.shape)}")
    geometry = _pool_geometry(name, n, x.shape[-n:], kernel_size, stride, padding, dilation,
                              ceil_mode)
    if min(geometry[4]) < 1:
        raise RuntimeError(f"{name}(): Given input size: ({'x'.join(map(str, x.shape[-n - 1:]))})"
                           f". Calculated output size: ("
                           f"{'x'.join(map(str, (x.shape[-n - 1],) + geometry[4]))}). Output "
                           f"size is too small")
    return geometry


def _pool_windows(xp, x, k, s, p, d, out, fill):
    """Windows of ``x``'s last ``len(k)`` axes padded with ``fill``: ``p`` on the left, on
    the right as much as the last window (a ceil_mode one may overhang) needs."""
    lead = x.ndim - len(k)
    eff = [di * (ki - 1) + 1 for di, ki in zip(d, k)]
    pads = [(0, 0)] * lead + [(pi, max(0, (o - 1) * si + e - size - pi)) for size, pi, si, o, e
                              in zip(x.shape[lead:], p, s, out, eff)]
    if any(lo or hi for lo, hi in pads):
        x = xp.pad(x, pads, constant_values=fill)
    return _windows(xp, x, eff, s, d, out)


def _argmax(xp, vals, ids, n):
    """(max, flat input index of it) over the last ``n`` axes of ``vals`` -- ATen's scan: the
    first maximum, or the last NaN (NaN wins); ``ids`` (broadcastable) is -1 at padding."""
    shape = vals.shape[:-n] + (math.prod(vals.shape[-n:]),)
    vals = vals.reshape(shape)
    if shape[-1] == 0:  # an output size of 0: no bins, nothing to pick from
        return xp.empty(shape[:-1], vals.dtype), xp.empty(shape[:-1], np.int64)
    ids = xp.broadcast_to(ids.reshape(ids.shape[:-n] + shape[-1:]), shape)
    top = vals.max(axis=-1, keepdims=True)
    pick = xp.argmax((vals == top) & (ids >= 0), axis=-1)
    if vals.dtype.kind == "f":
        nan = xp.isnan(vals)
        last_nan = shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        pick = xp.where(nan.any(axis=-1), last_nan, pick)
    index = xp.take_along_axis(ids, pick[..., None], axis=-1)[..., 0]
    return xp.ascontiguousarray(top[..., 0]), xp.ascontiguousarray(index.astype(np.int64))


def _max_pool(n, name, with_indices=False, float_only=False):
    def impl(xp, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if x.dtype.kind not in ("f" if float_only else "fiu"):
            raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype}'")
        k, s, p, d, out = _pool_setup(name, n, x, kernel_size, stride, padding, dilation,
                                      ceil_mode)
        lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        win = _pool_windows(xp, x, k, s, p, d, out, lowest)
        if not with_indices:
            return xp.ascontiguousarray(win.max(axis=tuple(range(-n, 0))))
        flat = xp.arange(math.prod(x.shape[-n:]), dtype=np.int64).reshape(x.shape[-n:])
        return _argmax(xp, win, _pool_windows(xp, flat, k, s, p, d, out, -1), n)
    return impl


def _avg_pool(n, name):
    def impl(xp, x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
        if x.dtype.kind != "f" and x.dtype != np.int64:
            raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype}'")
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        k, s, p, d, out = _pool_setup(name, n, x, kernel_size, stride, padding, 1, ceil_mode)
        comp = _acc_dtype(x.dtype)
        total = _pool_windows(xp, x.astype(comp, copy=False), k, s, p, d, out, 0).sum(
            axis=tuple(range(-n, 0)))
        if divisor_override is not None:
            div = xp.asarray(divisor_override, dtype=comp)
        else:  # per axis: the window's span, clipped to the padded input (count_include_pad)
            div = np.ones((), np.int64)  # or to the input itself; their outer product
            for size, ki, si, pi, o in zip(x.shape[-n:], k, s, p, out):
                start = np.arange(o) * si - pi
                end = np.minimum(start + ki, size + pi)
                span = end - start if count_include_pad else \
                    np.minimum(end, size) - np.maximum(start, 0)
                div = np.multiply.outer(div, np.maximum(span, 1))
            div = xp.asarray(div.astype(comp))
        if x.dtype.kind == "f":
            return (total / div).astype(x.dtype)
        q = xp.abs(total) // xp.abs(div)  # int64: C's division, truncating toward zero
        return (q * xp.sign(total) * xp.sign(div)).astype(x.dtype)
    return impl


# -- adaptive pooling ----------------------------------------------------------------------------

def _adaptive_setup(name, n, x, output_size, float_name):
    out = _ints(output_size, n, lambda got: f"{name}: output_size must be {n} ints, got {got}")
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {list(out)}")
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{list(x.shape)}")
    for i in range(x.ndim - n, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension "
                               f"{i} being empty")
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"{float_name}\" not implemented for '{x.dtype}'")
    return out


def _adaptive_gather(xp, x, out):
    """``x``'s adaptive bins as ``(..., *out, *kmax)`` (kmax: the widest bin per axis; narrower
    bins repeat their last element), the mask of real taps, and each output's element count."""
    n, lead = len(out), x.ndim - len(out)
    index, mask, count, flat = [], np.ones((), bool), np.ones((), np.int64), 0
    for a, (size, o) in enumerate(zip(x.shape[lead:], out)):
        i = np.arange(o)
        start, end = i * size // o, -(-(i + 1) * size // o)
        taps = start[:, None] + np.arange(int((end - start).max(initial=0)))
        shape = [1] * (2 * n)
        shape[2 * a:2 * a + 2] = taps.shape
        index.append(np.minimum(taps, end[:, None] - 1).reshape(shape))
        mask = mask & (taps < end[:, None]).reshape(shape)
        count = np.multiply.outer(count, end - start)
        flat = flat * size + index[-1]
    perm = tuple(range(0, 2 * n, 2)) + tuple(range(1, 2 * n, 2))  # window axes last
    g = x[(Ellipsis,) + tuple(xp.asarray(ix) for ix in index)]
    g = g.transpose(tuple(range(lead)) + tuple(lead + a for a in perm))
    return g, xp.asarray(mask.transpose(perm)), count, xp.asarray(flat.transpose(perm))


def _adaptive(n, kind):
    name = f"adaptive_{kind}_pool{n}d"

    def impl(xp, x, output_size):
        out = _adaptive_setup(name, n, x, output_size, f"adaptive_{kind}_pool{max(n, 2)}d")
        if kind == "max":  # a repeated tap changes neither the max nor which tap ATen picks
            g, _, _, flat = _adaptive_gather(xp, x, out)
            return _argmax(xp, g, flat, n)
        comp = _acc_dtype(x.dtype)
        g, mask, count, _ = _adaptive_gather(xp, x.astype(comp, copy=False), out)
        total = xp.where(mask, g, comp.type(0)).sum(axis=tuple(range(-n, 0)))
        total = total / xp.asarray(np.maximum(count, 1).astype(comp))
        return xp.ascontiguousarray(total.astype(x.dtype))
    return impl


# -- registration --------------------------------------------------------------------------------

def _const_ints(node, i):
    v = arg(node, i)
    return v if isinstance(v, (list, tuple)) or is_int_literal(v) else None


def _infer_pool(n, name, dilation_at, ceil_at, outputs):
    def infer(node, types):
        x = tensor_in(types)
        shape = None
        try:
            d = 1 if dilation_at is None else _const_ints(node, dilation_at)
            ceil = arg(node, ceil_at, False)
            if isinstance(ceil, bool) and x.rank in (n + 1, n + 2):
                geometry = _pool_geometry(name, n, x.shape[-n:], _const_ints(node, 1),
                                          arg(node, 2, ()), _const_ints(node, 3), d, ceil)
                shape = tuple(x.shape[:-n]) + geometry[4]
        except (RuntimeError, TypeError):  # unknown sizes or arguments
            pass
        return [like(x, x.dtype, shape), like(x, "int64", shape)][:outputs]
    return infer


def _infer_adaptive(n, outputs):
    def infer(node, types):
        x, size = tensor_in(types), _const_ints(node, 1)
        size = [size] if is_int_literal(size) else size
        shape = None
        if x.rank in (n + 1, n + 2) and size is not None and len(size) == n:
            shape = tuple(x.shape[:-n]) + tuple(size)
        return [like(x, x.dtype, shape), like(x, "int64", shape)][:outputs]
    return infer


_MAX = "int[{n}] stride=[], int[{n}] padding={zero}, int[{n}] dilation={one}, bool ceil_mode=False"
for _n in (1, 2, 3):
    _kernel = f"Tensor self, int[{_n}] kernel_size"
    _max = _MAX.format(n=_n, zero=[0] * _n, one=[1] * _n)
    defop(f"aten::max_pool{_n}d", f"{_kernel}, {_max}",
          _max_pool(_n, f"max_pool{_n}d", float_only=_n == 1),  # ATen's max_pool1d_impl
          infer=_infer_pool(_n, f"max_pool{_n}d", 4, 5, 1))
    defop(f"aten::max_pool{_n}d_with_indices", f"{_kernel}, {_max}",
          _max_pool(_n, f"max_pool{_n}d_with_indices", with_indices=True), num_outputs=2,
          infer=_infer_pool(_n, f"max_pool{_n}d", 4, 5, 2))
    defop(f"aten::avg_pool{_n}d", f"{_kernel}, int[{_n}] stride=[], int[{_n}] padding="
          f"{[0] * _n}, bool ceil_mode=False, bool count_include_pad=True"
          + (", int? divisor_override=None" if _n >= 2 else ""),
          _avg_pool(_n, f"avg_pool{_n}d"), infer=_infer_pool(_n, f"avg_pool{_n}d", None, 4, 1))
    defop(f"aten::adaptive_avg_pool{_n}d", f"Tensor self, int[{_n}] output_size",
          _adaptive(_n, "avg"), infer=_infer_adaptive(_n, 1))
    defop(f"aten::adaptive_max_pool{_n}d", f"Tensor self, int[{_n}] output_size",
          _adaptive(_n, "max"), num_outputs=2, infer=_infer_adaptive(_n, 2))
