"""``torch.nn.functional`` as TorchScript graphs, registered as ``prim::CallFunction`` callees.

Scripting a function that calls ``F.relu`` prints a call of a function constant, not the op::

    %3 : Function = prim::Constant[name="relu"]()
    %2 : bool = prim::Constant[value=0]()
    %a.1 : Tensor = prim::CallFunction(%3, %x.1, %2) # f.py:3:8

The callee is the graph PyTorch compiles ``F.relu``'s Python source to (``torch.jit.script(
F.relu).graph``), with ``inplace`` still a parameter::

    graph(%input.1 : Tensor,
          %inplace.1 : bool):
      %result : Tensor = prim::If(%inplace.1) # torch/nn/functional.py:1768:4
        block0():
          %result.1 : Tensor = aten::relu_(%input.1) # torch/nn/functional.py:1769:17
          -> (%result.1)
        block1():
          %result.3 : Tensor = aten::relu(%input.1) # torch/nn/functional.py:1771:17
          -> (%result.3)
      return (%result)

This module registers one such graph per name in ``NN_FUNCTIONS`` (``ops/functions.py``'s table),
so the interpreter runs the calls and ``passes/inline_functions.py`` inlines them, after which
constant propagation folds the ``inplace`` branch away and the ops fuse like any others.

The texts in ``nn_functions.graphs`` (a data file next to this module: ``## <name>`` lines
between graph texts) are PyTorch's own, printed by PyTorch 2.13.0 (CPU) and trimmed of the
installation's path (``# /.../site-packages/torch/nn/functional.py:1768:4`` becomes
``# torch/nn/functional.py:1768:4``); regenerate them with torch installed::

    python -c "from torchlike.ops.nn_functions import write_data_file; write_data_file()"

which writes ``generate_data_file()``: ``torch.jit.script(getattr(F, name)).graph`` for each
``F`` function listed in ``NN_FUNCTIONS`` (registered under the name PyTorch's call sites use:
``F.threshold`` scripts as ``_threshold``) and for the helper functions their graphs call
(``_get_softmax_dim``, ``_verify_batch_size``), in that order.  ``aten::warn``, which
``_get_softmax_dim`` calls, is registered here; ``aten::glu``, ``aten::layer_norm`` and
``aten::batch_norm``, ``aten::instance_norm`` in ``ops/normalization.py``.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Dict, List, Tuple

from ..ir.graph import Graph
from ..ir.parser import parse_graph
from .functions import lookup_function, register_function
from .registry import OpDef, register

# torch.nn.functional attributes whose scripted graphs the table holds (the name a call site's
# constant carries is the scripted function's own name: F.threshold is "_threshold").
NN_FUNCTIONS: Tuple[str, ...] = (
    # elementwise activations
    "relu", "relu6", "hardtanh", "elu", "selu", "celu", "leaky_relu", "silu", "mish",
    "hardsigmoid", "hardswish", "softsign", "tanhshrink", "threshold", "sigmoid", "tanh",
    # dropout and rrelu (eval mode is deterministic; training mode raises, as aten::dropout)
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "rrelu",
    # softmax family and the helper they call when dim is None
    "softmax", "softmin", "log_softmax", "_get_softmax_dim",
    # glu and normalization (ops/normalization.py), with batch_norm's training-mode check
    "glu", "layer_norm", "batch_norm", "group_norm", "_verify_batch_size", "instance_norm",
    "_verify_spatial_size",
    # pooling (ops/conv_pool.py): the functions F.max_pool2d & co. dispatch to
    "_max_pool1d", "_max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "adaptive_avg_pool2d", "_adaptive_max_pool1d", "_adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    # embedding, padding, normalize, and the losses (ops/losses.py) with the reduction-argument
    # helpers of torch.nn._reduction they call (REDUCTION_HELPERS)
    "embedding", "pad", "normalize", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    # more normalization and pooling: rms_norm (aten::rms_norm, ops/normalization.py), 3-d max
    # pooling's dispatch targets, power-average pooling, F.unfold / F.fold
    "rms_norm", "local_response_norm", "_max_pool3d", "max_pool3d_with_indices", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "unfold", "fold",
    # spatial transformers: F.affine_grid, F.grid_sample
    "affine_grid", "grid_sample",
    # nn.MultiheadAttention's forward and the helpers its graph calls
    "multi_head_attention_forward", "_canonical_mask", "_none_or_dtype", "_mha_shape_check",
    "_in_projection_packed", "_in_projection",
    # bags of embeddings, unpooling (ops/tensor_shape_*.py), 3-d adaptive max pooling's
    # dispatch targets (F.gaussian_nll_loss does not script in torch 2.13)
    "embedding_bag", "max_unpool1d", "max_unpool2d", "max_unpool3d", "_unpool_output_size",
    "_adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
)
# torch.nn._reduction's functions the losses' graphs call
REDUCTION_HELPERS: Tuple[str, ...] = ("get_enum", "legacy_get_string", "legacy_get_enum")

_PATH = re.compile(r"# \S*?(torch/nn/(?:functional|_reduction)\.py:\d+:\d+)")


def trim_paths(text: str) -> str:
    """``# /any/where/torch/nn/functional.py:L:C`` -> ``# torch/nn/functional.py:L:C``."""
    return _PATH.sub(r"# \1", text)


def generate_texts(torch) -> Dict[str, str]:
    """{registered name: graph text} for ``NN_FUNCTIONS``, printed by ``torch`` now."""
    import torch.nn._reduction as reduction
    import torch.nn.functional as F
    texts: Dict[str, str] = {}
    for fn in [getattr(F, a) for a in NN_FUNCTIONS] + \
            [getattr(reduction, a) for a in REDUCTION_HELPERS]:
        fn = torch.jit.script(fn)
        texts[fn.name] = trim_paths(str(fn.graph)).rstrip("\n") + "\n"
    return texts


DATA_FILE = Path(__file__).with_name("nn_functions.graphs")
_HEADER = "# "   # header lines (how the file was made), before the first graph
_NAME = "## "    # a line "## relu" starts the graph registered as "relu"


def generate_data_file() -> str:
    """The text of ``nn_functions.graphs`` (needs torch): a header naming the torch version,
    then for each function a line ``## <name>`` and the graph text."""
    import torch
    lines: List[str] = [
        f"{_HEADER}torch {torch.__version__}",
        f"{_HEADER}torch.jit.script(F.<name>).graph for each name in "
        "torchlike.ops.nn_functions.NN_FUNCTIONS (and torch.nn._reduction's REDUCTION_HELPERS), "
        "installation paths trimmed;",
        f"{_HEADER}written by torchlike.ops.nn_functions.write_data_file(): do not edit by hand.",
    ]
    for name, text in generate_texts(torch).items():
        lines.append(f"{_NAME}{name}")
        lines.extend(text.rstrip("\n").split("\n"))
    return "\n".join(lines) + "\n"


def write_data_file() -> Path:
    """Regenerate ``nn_functions.graphs`` next to this module (needs torch)."""
    DATA_FILE.write_text(generate_data_file())
    return DATA_FILE


def read_data_file() -> Tuple[str, Dict[str, str]]:
    """(the torch version that printed them, {name: graph text}) from ``nn_functions.graphs``."""
    version, texts, name = "", {}, None
    for line in DATA_FILE.read_text().splitlines(keepends=True):
        if line.startswith(_NAME):
            name = line[len(_NAME):].strip()
            texts[name] = ""
        elif name is not None:
            texts[name] += line
        elif line.startswith(f"{_HEADER}torch ") and not version:
            version = line[len(_HEADER) + len("torch "):].strip()
    return version, texts


# -- ops the bodies use that no other module registers ---------------------------------------------

def _warn(xp, message, stacklevel=2, **attrs):
    """``aten::warn[warn_id=0](%msg, %stacklevel)``: a Python warning (``warn_id`` is ignored)."""
    warnings.warn(str(message), UserWarning, stacklevel=2)


register(OpDef("aten::warn", (), _warn, category="prim", num_outputs=0, pure=False,
               infer=lambda node, types: []))


# -- the table -------------------------------------------------------------------------------------

def nn_function_graphs() -> Dict[str, Graph]:
    """{name: a fresh Graph} for every stored text (parsed now)."""
    return {name: parse_graph(text) for name, text in read_data_file()[1].items()}


def register_nn_functions(replace: bool = False) -> None:
    """Register every stored graph under its name (``replace=False`` keeps a function a user
    registered under the same name)."""
    for name, graph in nn_function_graphs().items():
        if replace or lookup_function(name) is None:
            register_function(name, graph)


register_nn_functions()
