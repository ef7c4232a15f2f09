"""GPT-2 blocks (transformers' GPT2Model, random weights) in six variants:
HF's Conv1D as torch.addmm(bias, x, W), as transformers.pytorch_utils.Conv1D
does ("addmm"), or as x @ W then + bias ("mm_add") -- the paper's case study
(Magneton, arXiv 2512.08365, section 6); the MLP activation as HF's
"gelu_new", eight elementwise operators ("gelu_new"), or the fused
F.gelu(approximate="tanh") ("gelu_fused"); and attention written out as
matmul, softmax, matmul ("eager", HF's eager attention) or as one
scaled_dot_product_attention call ("sdpa")."""

from __future__ import annotations

import torch

from magneton.demo import common

SIZES = {  # layers, width, heads, batch, sequence
    "tiny": (2, 64, 2, 1, 16),
    "small": (4, 256, 4, 2, 128),
    # GPT-2 small's layers, fewer of them: both attention variants recorded
    # and diffed within a minute on one GPU (docs/diff.md, "magneton demo").
    "medium": (4, 768, 12, 8, 512),
    "full": (12, 768, 12, 8, 1024),
}

WHAT = {"addmm": "Conv1D as addmm", "mm_add": "Conv1D as mm + add", "gelu_new": "GELU as 8 operators",
        "gelu_fused": "GELU fused", "eager": "attention written out", "sdpa": "scaled_dot_product_attention"}


def conv1d_mm_add(self, x):
    """Conv1D.forward without addmm: the GEMM, then the bias in its own kernel."""
    size_out = x.size()[:-1] + (self.nf,)
    x = torch.mm(x.view(-1, x.size(-1)), self.weight) + self.bias
    return x.view(size_out)


def default_size(variant: str, device: str) -> str:
    if device != "cuda":
        return "small"
    return "medium" if variant in ("eager", "sdpa") else "full"


def build(variant: str, size: str, device: str, seed: int = 0):
    """The model of `variant` at `size` on `device` (a torch device name) and
    its input: returns (step, description)."""
    from transformers import GPT2Config, GPT2Model
    from transformers import pytorch_utils

    layers, width, heads, batch, seq = SIZES[size]
    if variant == "mm_add":
        pytorch_utils.Conv1D.forward = conv1d_mm_add
    torch.manual_seed(seed)
    activation = "gelu_pytorch_tanh" if variant == "gelu_fused" else "gelu_new"
    config = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, n_positions=max(seq, 16), vocab_size=1024,
                        bos_token_id=0, eos_token_id=0, activation_function=activation,
                        attn_implementation="sdpa" if variant == "sdpa" else "eager")
    model = GPT2Model(config).eval().to(device)
    if variant in ("eager", "sdpa") and device == "cuda":
        model = model.half()  # as GPT-2 is served; SDPA then runs a flash kernel
    ids = torch.randint(0, config.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(1)).to(device)
    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    what = (f"GPT-2 {size}: {layers} layers, width {width}, batch {batch}, sequence {seq}, {dtype}, on {device}, "
            f"{WHAT[variant]}")
    return (lambda: model(ids)), what


def run(args, device: str) -> None:
    """Records args.variant's two passes (common.record_passes) on `device`."""
    from transformers import pytorch_utils

    size = args.size if args.size != "auto" else default_size(args.variant, device)
    stock = pytorch_utils.Conv1D.forward
    try:  # build() swaps Conv1D.forward for "mm_add": restored for what runs after in this process
        step, what = build(args.variant, size, device, args.seed)
        common.say(what)
        # Conv1D's GEMM and bias: on the H200 the two variants differ more in power than in time.
        replay_ops = ("aten::addmm", "aten::mm", "aten::add") if args.variant in ("addmm", "mm_add") else ()
        common.record_passes(args, step, device, args.variant, replay_ops)
    finally:
        pytorch_utils.Conv1D.forward = stock


def main() -> None:
    args = common.parse_args(__doc__, tuple(WHAT))
    run(args, common.pick_device(torch, args.device))


if __name__ == "__main__":
    main()
