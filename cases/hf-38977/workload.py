"""The prefill step of generation with GPT-2 (transformers GPT2LMHeadModel from a config,
random weights, fp32): 8 prompts of 512 tokens; generation needs only the next-token
logits of the last position. Both sides run the same model on the same prompts."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    if small:
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=64,
                         bos_token_id=999, eos_token_id=999)
        batch, seq = 2, 16
    else:
        cfg = GPT2Config(n_layer=4)  # GPT-2 small's width and vocabulary, 4 of 12 blocks
        batch, seq = 8, 512
    model = GPT2LMHeadModel(cfg).eval().to(device)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq)).to(device)
    return {"model": model, "ids": ids}


@torch.no_grad()
def next_token_logits(state: dict, logits_to_keep: int) -> torch.Tensor:
    out = state["model"](input_ids=state["ids"], logits_to_keep=logits_to_keep)
    return out.logits[:, -1, :]
