#!/usr/bin/env python3
"""Records the labeled evaluation set for semantic matching (docs/matching.md,
"Evaluation") on the CPU: pairs of tiny models that compute the same thing two
ways, each recorded with magneton.record(..., fingerprints=True).

    PYTHONPATH=python python scripts/record_match_pairs.py [--out tests/data/match] [--device cuda] [pair ...]

Per pair it writes <out>/<pair>/a.mgt, b.mgt and labels.json. The labels are
the program's module structure, read while it runs: forward hooks on the
modules named in the pair note CLOCK_MONOTONIC (time.monotonic_ns, the
recorder's clock) before and after each call, so every recorded op falls in
the window of the modules it ran in. Corresponding modules carry the same name
on both sides; labels.json never looks at a matcher's output.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import magneton

SEED = 2026


class ModuleClock:
    """Forward pre/post hooks recording [start_ns, end_ns] per call of named modules."""

    def __init__(self, model: nn.Module, names: list[str]):
        self.windows: list[dict] = []
        self._handles = []
        modules = dict(model.named_modules())
        for name in names:
            if name not in modules:
                raise KeyError(f"module {name!r} not in {type(model).__name__}")
            module = modules[name]
            self._handles.append(module.register_forward_pre_hook(self._enter(name)))
            self._handles.append(module.register_forward_hook(self._leave(name)))
        self._open: dict[str, list[int]] = {}

    def _enter(self, name):
        def hook(module, args):
            self._open.setdefault(name, []).append(time.monotonic_ns())
        return hook

    def _leave(self, name):
        def hook(module, args, output):
            start = self._open[name].pop()
            self.windows.append({"name": name, "start_ns": start, "end_ns": time.monotonic_ns()})
        return hook

    def close(self):
        for h in self._handles:
            h.remove()


def record(model: nn.Module, inputs: tuple, labels: list[str], path: str) -> list[dict]:
    clock = ModuleClock(model, labels)
    try:
        with torch.no_grad(), magneton.record(path, fingerprints=True, overwrite=True,
                                              command=f"record_match_pairs.py {os.path.basename(path)}"):
            model(*inputs)
    finally:
        clock.close()
    return sorted(clock.windows, key=lambda w: w["start_ns"])


# ---------------------------------------------------------------------------
# GPT-2: HF Conv1D (addmm on [in, out] weights) against nn.Linear.

def gpt2_pair():
    from transformers import GPT2LMHeadModel
    from transformers.pytorch_utils import Conv1D

    cfg = gpt2_config()
    torch.manual_seed(SEED)
    a = GPT2LMHeadModel(cfg).eval()
    torch.manual_seed(SEED)
    b = GPT2LMHeadModel(cfg).eval()
    b.load_state_dict(a.state_dict())

    to_linear(b, Conv1D, nn.Linear)
    return a, b, (gpt2_ids(cfg),), gpt2_labels(cfg), \
        "HF GPT-2 (2 layers) with Conv1D (addmm) vs the same weights in nn.Linear"


def gpt2_config():
    from transformers import GPT2Config
    return GPT2Config(n_layer=2, n_embd=32, n_head=2, n_positions=16, vocab_size=64, bos_token_id=0,
                      eos_token_id=0, use_cache=False)


def gpt2_ids(cfg):
    return torch.randint(0, cfg.vocab_size, (1, 8), generator=torch.Generator().manual_seed(SEED))


def gpt2_labels(cfg):
    labels = ["transformer.wte", "transformer.wpe", "transformer.ln_f", "lm_head"]
    for i in range(cfg.n_layer):
        labels += [f"transformer.h.{i}"] + [f"transformer.h.{i}.{m}" for m in ("ln_1", "attn", "ln_2", "mlp")]
    return labels


def to_linear(module: nn.Module, conv1d_type, linear_type):
    """Replaces every HF Conv1D below `module` by `linear_type` with the same weights."""
    for name, child in module.named_children():
        if isinstance(child, conv1d_type):
            lin = linear_type(child.weight.shape[0], child.nf)
            lin.weight.data.copy_(child.weight.data.t())
            lin.bias.data.copy_(child.bias.data)
            setattr(module, name, lin)
        else:
            to_linear(child, conv1d_type, linear_type)


def round_to_tf32(x):
    """Rounds float32 values to TF32's 10-bit mantissa (nearest even), as
    tensor cores do to matmul inputs when allow_tf32 is on."""
    bits = x.contiguous().view(torch.int32)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & -0x2000
    return bits.view(torch.float32)


class Tf32Linear(nn.Linear):
    """nn.Linear whose matmul inputs are rounded to TF32 (accumulation stays fp32)."""

    def forward(self, x):
        return F.linear(round_to_tf32(x), round_to_tf32(self.weight), self.bias)


def gpt2_tf32_cuda_pair():
    """The same float32 GPT-2 twice; b is recorded with allow_tf32 on (tensor cores)."""
    from transformers import GPT2LMHeadModel
    from transformers.pytorch_utils import Conv1D

    cfg = gpt2_config()
    torch.manual_seed(SEED)
    a = GPT2LMHeadModel(cfg).eval()
    to_linear(a, Conv1D, nn.Linear)
    b = GPT2LMHeadModel(cfg).eval()
    to_linear(b, Conv1D, nn.Linear)
    b.load_state_dict(a.state_dict())
    return a, b, (gpt2_ids(cfg),), gpt2_labels(cfg), \
        "HF GPT-2 (2 layers, nn.Linear) on the GPU, float32 matmuls vs allow_tf32"


gpt2_tf32_cuda_pair.tf32_b = True
gpt2_tf32_cuda_pair.cuda_only = True


def gpt2_tf32_pair():
    from transformers import GPT2LMHeadModel
    from transformers.pytorch_utils import Conv1D

    cfg = gpt2_config()
    torch.manual_seed(SEED)
    a = GPT2LMHeadModel(cfg).eval()
    b = GPT2LMHeadModel(cfg).eval()
    b.load_state_dict(a.state_dict())
    to_linear(a, Conv1D, nn.Linear)
    to_linear(b, Conv1D, Tf32Linear)
    return a, b, (gpt2_ids(cfg),), gpt2_labels(cfg), \
        "HF GPT-2 (2 layers, nn.Linear) in float32 vs with TF32-rounded matmul inputs (emulated on the CPU)"


# ---------------------------------------------------------------------------
# Small transformer blocks written two ways.

class NewGELU(nn.Module):
    """GELU's tanh approximation as element-wise ops (HF NewGELUActivation)."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Mlp(nn.Module):
    def __init__(self, width, act):
        super().__init__()
        self.fc1 = nn.Linear(width, 4 * width)
        self.act = act
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Attention(nn.Module):
    """Causal self-attention; fused selects one qkv projection plus split,
    sdpa selects F.scaled_dot_product_attention over the math."""

    def __init__(self, width, heads, fused=False, sdpa=False):
        super().__init__()
        self.heads, self.fused, self.sdpa = heads, fused, sdpa
        if fused:
            self.qkv = nn.Linear(width, 3 * width)
        else:
            self.q, self.k, self.v = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        bsz, t, c = x.shape
        if self.fused:
            q, k, v = self.qkv(x).split(c, dim=2)
        else:
            q, k, v = self.q(x), self.k(x), self.v(x)
        q, k, v = (y.view(bsz, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
            att = att.masked_fill(~mask, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(bsz, t, c))

    def load_from(self, other: "Attention"):
        """Copies another attention's weights, fusing or splitting q/k/v."""
        sd = other.state_dict()
        if self.fused and not other.fused:
            self.qkv.weight.data.copy_(torch.cat([sd["q.weight"], sd["k.weight"], sd["v.weight"]]))
            self.qkv.bias.data.copy_(torch.cat([sd["q.bias"], sd["k.bias"], sd["v.bias"]]))
        elif not self.fused and other.fused:
            for name, w, b in zip("qkv", sd["qkv.weight"].chunk(3), sd["qkv.bias"].chunk(3)):
                getattr(self, name).weight.data.copy_(w)
                getattr(self, name).bias.data.copy_(b)
        else:
            for key in ("q", "k", "v", "qkv"):
                if hasattr(self, key):
                    getattr(self, key).load_state_dict(getattr(other, key).state_dict())
        self.proj.load_state_dict(other.proj.state_dict())


class Block(nn.Module):
    def __init__(self, width, heads, act, fused=False, sdpa=False):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(width), Attention(width, heads, fused, sdpa)
        self.ln2, self.mlp = nn.LayerNorm(width), Mlp(width, act)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    def __init__(self, layers=2, width=32, heads=2, act=None, fused=False, sdpa=False):
        super().__init__()
        self.blocks = nn.ModuleList(
            Block(width, heads, act if act is not None else nn.GELU(approximate="tanh"), fused, sdpa)
            for _ in range(layers))
        self.head = nn.Linear(width, 16)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def block_labels(layers=2):
    out = ["head"]
    for i in range(layers):
        out += [f"blocks.{i}"] + [f"blocks.{i}.{m}" for m in ("ln1", "attn", "ln2", "mlp")]
    return out


def transformer_pair(description, a_kwargs, b_kwargs, labels=None):
    torch.manual_seed(SEED)
    a = Transformer(**a_kwargs).eval()
    torch.manual_seed(SEED + 1)
    b = Transformer(**b_kwargs).eval()
    for block_a, block_b in zip(a.blocks, b.blocks):
        block_b.attn.load_from(block_a.attn)
        for name in ("ln1", "ln2", "mlp"):
            getattr(block_b, name).load_state_dict(getattr(block_a, name).state_dict())
    b.head.load_state_dict(a.head.state_dict())
    x = torch.randn(1, 8, 32, generator=torch.Generator().manual_seed(SEED))
    return a, b, (x,), labels or block_labels(), description


def gelu_pair():
    return transformer_pair("transformer blocks with GELU tanh as 8 element-wise ops vs fused gelu",
                            {"act": NewGELU()}, {"act": nn.GELU(approximate="tanh")})


def qkv_pair():
    return transformer_pair("attention with separate q/k/v projections vs one fused qkv projection and split",
                            {}, {"fused": True})


def sdpa_pair():
    return transformer_pair("attention math (matmul, scale, mask, softmax, matmul) vs scaled_dot_product_attention",
                            {}, {"sdpa": True})


# ---------------------------------------------------------------------------
# A small CNN in NCHW against the same in channels_last.

class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.bn2(self.conv2(x)))
        return self.head(x.mean(dim=(2, 3)))


def conv_pair():
    torch.manual_seed(SEED)
    a = Cnn().eval()
    for bn in (a.bn1, a.bn2):  # non-trivial running statistics
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    b = Cnn().eval()
    b.load_state_dict(a.state_dict())
    b = b.to(memory_format=torch.channels_last)
    x = torch.randn(2, 3, 12, 12, generator=torch.Generator().manual_seed(SEED))

    class ChannelsLast(nn.Module):
        """Feeds the input in channels_last, as a channels_last pipeline does."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x.contiguous(memory_format=torch.channels_last))

    labels = ["conv1", "bn1", "conv2", "bn2", "head"]
    return (a, ChannelsLast(b), (x,), labels + [f"inner.{n}" for n in labels],
            "small CNN (conv, batch norm, relu, pool) in NCHW vs channels_last")


# ---------------------------------------------------------------------------
# An MLP written two ways: nn modules against hand-written matmul, bias and clamp.

class ModuleMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Linear(24, 48), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Linear(48, 48), nn.ReLU())
        self.layer3 = nn.Linear(48, 10)

    def forward(self, x):
        return F.log_softmax(self.layer3(self.layer2(self.layer1(x))), dim=-1)


class HandLayer(nn.Module):
    def __init__(self, lin: nn.Linear, relu: bool):
        super().__init__()
        self.w = nn.Parameter(lin.weight.detach().t().contiguous())  # stored [in, out]
        self.b = nn.Parameter(lin.bias.detach().clone())
        self.relu = relu

    def forward(self, x):
        y = torch.matmul(x, self.w) + self.b
        return torch.clamp(y, min=0) if self.relu else y


class HandMlp(nn.Module):
    def __init__(self, m: ModuleMlp):
        super().__init__()
        self.layer1, self.layer2 = HandLayer(m.layer1[0], True), HandLayer(m.layer2[0], True)
        self.layer3 = HandLayer(m.layer3, False)

    def forward(self, x):
        z = self.layer3(self.layer2(self.layer1(x)))
        return z - torch.logsumexp(z, dim=-1, keepdim=True)


def mlp_pair():
    torch.manual_seed(SEED)
    a = ModuleMlp().eval()
    b = HandMlp(a).eval()
    x = torch.randn(4, 24, generator=torch.Generator().manual_seed(SEED))
    return a, b, (x,), ["layer1", "layer2", "layer3"], \
        "3-layer MLP: nn.Linear + relu + log_softmax vs matmul + bias + clamp + logsumexp"


PAIRS = {
    "gpt2_conv1d_linear": gpt2_pair,
    "gpt2_fp32_tf32": gpt2_tf32_pair,
    "gelu_composite_fused": gelu_pair,
    "attention_qkv_fused": qkv_pair,
    "attention_math_sdpa": sdpa_pair,
    "conv_nchw_channels_last": conv_pair,
    "mlp_two_ways": mlp_pair,
    "gpt2_tf32_cuda": gpt2_tf32_cuda_pair,
}


def strip_prefix(windows: list[dict], prefix: str) -> list[dict]:
    return [dict(w, name=w["name"][len(prefix):] if w["name"].startswith(prefix) else w["name"]) for w in windows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "match"))
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("pairs", nargs="*", help=f"default: all of {', '.join(PAIRS)} that the device runs")
    args = parser.parse_args()
    unknown = [p for p in args.pairs if p not in PAIRS]
    if unknown:
        print(f"record_match_pairs.py: unknown pair {unknown[0]!r} (known: {', '.join(PAIRS)})", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("record_match_pairs.py: --device cuda: no CUDA device visible to torch", file=sys.stderr)
        return 2
    torch.set_num_threads(1)  # deterministic reductions, same kernels on both sides
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    names = args.pairs or [n for n, f in PAIRS.items() if args.device == "cuda" or not getattr(f, "cuda_only", False)]
    for name in names:
        make = PAIRS[name]
        if getattr(make, "cuda_only", False) and args.device != "cuda":
            print(f"record_match_pairs.py: pair {name!r} needs --device cuda", file=sys.stderr)
            return 2
        a, b, inputs, labels, description = make()
        a, b = a.to(args.device), b.to(args.device)
        inputs = tuple(x.to(args.device) for x in inputs)
        out = os.path.join(args.out, name)
        os.makedirs(out, exist_ok=True)
        modules_a = record(a, inputs, [n for n in labels if n in dict(a.named_modules())], os.path.join(out, "a.mgt"))
        tf32 = getattr(make, "tf32_b", False)
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
        modules_b = record(b, inputs, [n for n in labels if n in dict(b.named_modules())], os.path.join(out, "b.mgt"))
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        with torch.no_grad():
            ya, yb = a(*inputs), b(*inputs)
            ya, yb = getattr(ya, "logits", ya), getattr(yb, "logits", yb)
            same = torch.allclose(ya, yb, rtol=1e-2, atol=1e-3)
        labels_json = {
            "pair": name,
            "description": description,
            "a": "a.mgt",
            "b": "b.mgt",
            "torch": torch.__version__,
            "device": args.device,
            "outputs_close": bool(same),
            "modules_a": modules_a,
            # the channels_last wrapper nests the model under "inner."
            "modules_b": strip_prefix(modules_b, "inner."),
        }
        with open(os.path.join(out, "labels.json"), "w") as f:
            json.dump(labels_json, f, indent=1)
        sizes = [os.path.getsize(os.path.join(out, p)) // 1024 for p in ("a.mgt", "b.mgt")]
        print(f"{name}: {len(modules_a)}/{len(modules_b)} module windows, {sizes[0]}/{sizes[1]} KiB, "
              f"outputs close: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
