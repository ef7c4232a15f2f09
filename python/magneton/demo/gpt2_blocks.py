"""GPT-2 blocks (transformers' GPT2Model, random weights) in four variants:
HF's Conv1D as torch.addmm(bias, x, W), as transformers.pytorch_utils.Conv1D
does ("addmm"), or as x @ W then + bias ("mm_add") -- the paper's case study
(Magneton, arXiv 2512.08365, section 6); and the MLP activation as HF's
"gelu_new", eight elementwise operators ("gelu_new"), or the fused
F.gelu(approximate="tanh") ("gelu_fused")."""

from __future__ import annotations

import torch

from magneton.demo import common

SIZES = {  # layers, width, heads, batch, sequence
    "tiny": (2, 64, 2, 1, 16),
    "small": (4, 256, 4, 2, 128),
    "full": (12, 768, 12, 8, 1024),
}


def conv1d_mm_add(self, x):
    """Conv1D.forward without addmm: the GEMM, then the bias in its own kernel."""
    size_out = x.size()[:-1] + (self.nf,)
    x = torch.mm(x.view(-1, x.size(-1)), self.weight) + self.bias
    return x.view(size_out)


def main() -> None:
    args = common.parse_args(__doc__, ("addmm", "mm_add", "gelu_new", "gelu_fused"))
    from transformers import GPT2Config, GPT2Model
    from transformers import pytorch_utils

    device = common.pick_device(torch, args.device)
    size = args.size if args.size != "auto" else ("full" if device == "cuda" else "small")
    layers, width, heads, batch, seq = SIZES[size]
    if args.variant == "mm_add":
        pytorch_utils.Conv1D.forward = conv1d_mm_add
    torch.manual_seed(args.seed)
    activation = "gelu_pytorch_tanh" if args.variant == "gelu_fused" else "gelu_new"
    config = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, n_positions=max(seq, 16), vocab_size=1024,
                        bos_token_id=0, eos_token_id=0, activation_function=activation,
                        attn_implementation="eager")
    model = GPT2Model(config).eval().to(device)
    ids = torch.randint(0, config.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(1)).to(device)
    what = {"addmm": "Conv1D as addmm", "mm_add": "Conv1D as mm + add", "gelu_new": "GELU as 8 operators",
            "gelu_fused": "GELU fused"}[args.variant]
    common.say(f"GPT-2 {size}: {layers} layers, width {width}, batch {batch}, sequence {seq}, on {device}, {what}")
    # Conv1D's GEMM and bias: on the H200 the two variants differ more in power than in time.
    replay_ops = ("aten::addmm", "aten::mm", "aten::add") if args.variant in ("addmm", "mm_add") else ()
    common.record_passes(args, lambda: model(ids), device, args.variant, replay_ops)


if __name__ == "__main__":
    main()
