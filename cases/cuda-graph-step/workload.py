"""One greedy decoding step of a small GPT-2-like model (GPT2LMHeadModel from a GPT2Config
with random weights: 6 layers of width 512) for a single request: the 32-token context is
run without a KV cache and the next token's logits are taken, as a small interactive model
or a draft model decodes. At batch 1 every kernel is tiny: the step is bound by the host
launching ~200 kernels, not by the device running them. Both sides run the same model on the
same context; they differ only in how the step's kernels reach the device."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import casekit  # on sys.path: the variant put cases/ there


def config(small: bool) -> GPT2Config:
    if small:
        return GPT2Config(vocab_size=256, n_positions=64, n_embd=64, n_layer=2, n_head=4, bos_token_id=0,
                          eos_token_id=0)
    return GPT2Config(vocab_size=50257, n_positions=1024, n_embd=512, n_layer=6, n_head=8)


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    cfg = config(small)
    cfg._attn_implementation = "sdpa"
    model = GPT2LMHeadModel(cfg).to(device).eval()
    context = 8 if small else 32
    ids = torch.randint(0, cfg.vocab_size, (1, context)).to(device)
    return {"model": model, "ids": ids, "device": torch.device(device)}


@torch.no_grad()
def decode_step(model, ids: torch.Tensor) -> torch.Tensor:
    """The next token's logits (1 x vocab) for the context `ids`."""
    return model(ids, use_cache=False, logits_to_keep=1).logits[:, -1]
