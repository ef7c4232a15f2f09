"""The same three models in PyTorch and in JAX, with the same weights: an MLP,
a conv stack and a transformer attention block. Used to record the committed
cross-framework fixtures (make_fixtures.py), by the tests, and on the GPU
(scripts/gpu/jax.sh) with larger sizes.

Weights are made once in torch (seeded) and converted: a Linear weight [out,
in] becomes a JAX kernel [in, out]; a conv weight OIHW becomes HWIO, because
the JAX conv stack runs channels-last (NHWC), as JAX code usually does, while
torch runs NCHW. The values are the same; only their layout differs, which
the layout-invariant fingerprints are meant to see through.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.nn.functional as F


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


# ---------------------------------------------------------------- MLP
def mlp_torch_params(d_in=64, d_hidden=128, d_out=32, layers=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    dims = [d_in] + [d_hidden] * (layers - 1) + [d_out]
    return [(torch.randn(o, i, generator=g) / math.sqrt(i), torch.randn(o, generator=g) * 0.1)
            for i, o in zip(dims[:-1], dims[1:])]


def mlp_torch(params, x):
    for k, (w, b) in enumerate(params):
        x = F.linear(x, w, b)
        if k < len(params) - 1:
            x = F.gelu(x, approximate="tanh")
    return x


def mlp_jax_params(torch_params):
    return [(jnp.asarray(_np(w.t())), jnp.asarray(_np(b))) for w, b in torch_params]


def mlp_jax(params, x):
    for k, (w, b) in enumerate(params):
        x = x @ w + b
        if k < len(params) - 1:
            x = jax.nn.gelu(x, approximate=True)
    return x


# ---------------------------------------------------------------- conv stack
def conv_torch_params(channels=(3, 8, 16), classes=10, seed=1):
    g = torch.Generator().manual_seed(seed)
    convs = [(torch.randn(o, i, 3, 3, generator=g) / math.sqrt(9 * i), torch.randn(o, generator=g) * 0.1)
             for i, o in zip(channels[:-1], channels[1:])]
    head = (torch.randn(classes, channels[-1], generator=g) / math.sqrt(channels[-1]),
            torch.randn(classes, generator=g) * 0.1)
    return convs, head


def conv_torch(params, x):  # x: NCHW
    convs, (hw, hb) = params
    for k, (w, b) in enumerate(convs):
        x = F.relu(F.conv2d(x, w, b, stride=1 if k == 0 else 2, padding=1))
    return F.linear(x.mean(dim=(2, 3)), hw, hb)


def conv_jax_params(torch_params):
    convs, (hw, hb) = torch_params
    return ([(jnp.asarray(_np(w.permute(2, 3, 1, 0))), jnp.asarray(_np(b))) for w, b in convs],
            (jnp.asarray(_np(hw.t())), jnp.asarray(_np(hb))))


def conv_jax(params, x):  # x: NHWC
    convs, (hw, hb) = params
    for k, (w, b) in enumerate(convs):
        s = 1 if k == 0 else 2
        x = jax.lax.conv_general_dilated(x, w, (s, s), ((1, 1), (1, 1)),
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = jax.nn.relu(x + b)
    return x.mean(axis=(1, 2)) @ hw + hb


def nchw_to_nhwc(x: torch.Tensor):
    return jnp.asarray(_np(x.permute(0, 2, 3, 1)))


# ---------------------------------------------------------------- attention block
def attention_torch_params(d_model=64, seed=2):
    g = torch.Generator().manual_seed(seed)
    lin = lambda: (torch.randn(d_model, d_model, generator=g) / math.sqrt(d_model),
                   torch.randn(d_model, generator=g) * 0.1)
    return {"q": lin(), "k": lin(), "v": lin(), "o": lin(),
            "ln": (1 + 0.1 * torch.randn(d_model, generator=g), 0.1 * torch.randn(d_model, generator=g))}


def attention_torch(params, x, heads=4):  # x: [batch, seq, d_model]
    b, s, d = x.shape
    split = lambda t: t.view(b, s, heads, d // heads).transpose(1, 2)  # [b, h, s, dh]
    q, k, v = (split(F.linear(x, *params[n])) for n in "qkv")
    a = F.scaled_dot_product_attention(q, k, v)
    a = a.transpose(1, 2).reshape(b, s, d)
    y = x + F.linear(a, *params["o"])
    return F.layer_norm(y, (d,), *params["ln"])


def attention_jax_params(torch_params):
    return {n: tuple(jnp.asarray(_np(t.t() if t.dim() == 2 else t)) for t in ws)
            for n, ws in torch_params.items()}


def attention_jax(params, x, heads=4):
    b, s, d = x.shape
    split = lambda t: t.reshape(b, s, heads, d // heads)  # [b, s, h, dh]: JAX's layout
    q, k, v = (split(x @ params[n][0] + params[n][1]) for n in "qkv")
    a = jax.nn.dot_product_attention(q, k, v).reshape(b, s, d)
    y = x + a @ params["o"][0] + params["o"][1]
    mean = y.mean(-1, keepdims=True)
    var = ((y - mean) ** 2).mean(-1, keepdims=True)
    g, beta = params["ln"]
    return (y - mean) * jax.lax.rsqrt(var + 1e-5) * g + beta


# ---------------------------------------------------------------- the pairs
def pair(name, size="small", seed=3):
    """(torch_fn, torch_args, jax_fn, jax_args) for one model; `jax_fn` is jitted,
    as JAX models run in practice."""
    g = torch.Generator().manual_seed(seed)
    big = size == "large"  # GPU sizes: each forward pass takes milliseconds on an H200
    if name == "mlp":
        tp = mlp_torch_params(*(4096, 16384, 4096, 4) if big else ())
        x = torch.randn(4096 if big else 8, tp[0][0].shape[1], generator=g)
        return mlp_torch, (tp, x), jax.jit(mlp_jax), (mlp_jax_params(tp), jnp.asarray(_np(x)))
    if name == "conv":
        tp = conv_torch_params(*((3, 128, 256), 100) if big else ())
        x = torch.randn(64 if big else 2, 3, 128 if big else 16, 128 if big else 16, generator=g)
        return conv_torch, (tp, x), jax.jit(conv_jax), (conv_jax_params(tp), nchw_to_nhwc(x))
    if name == "attention":
        d = 1024 if big else 64
        tp = attention_torch_params(d)
        x = torch.randn(8 if big else 2, 2048 if big else 16, d, generator=g)
        heads = 16 if big else 4
        return (partial(attention_torch, heads=heads), (tp, x),
                jax.jit(partial(attention_jax, heads=heads)), (attention_jax_params(tp), jnp.asarray(_np(x))))
    raise ValueError(f"unknown model {name!r}: expected mlp, conv or attention")


MODELS = ("mlp", "conv", "attention")
