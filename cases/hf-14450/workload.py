"""A GPT-2 forward pass in fp32 (transformers GPT2Model from a config, random weights).
Both sides run this exact model on the same token ids; they differ only in the
TF32 switch for cuBLAS matmuls."""
import torch
from transformers import GPT2Config, GPT2Model

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    if small:
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=64,
                         bos_token_id=999, eos_token_id=999)
        batch, seq = 2, 32
    else:
        cfg = GPT2Config(n_layer=4)  # GPT-2 small's width; 4 of its 12 blocks
        batch, seq = 8, 512
    model = GPT2Model(cfg).eval().to(device)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq)).to(device)
    return {"model": model, "ids": ids}


def set_tf32(matmul: bool) -> None:
    # The legacy switches (what the issue discusses); torch 2.11 refuses to mix them
    # with the fp32_precision API, so the suite uses only these.
    torch.backends.cuda.matmul.allow_tf32 = matmul
    torch.backends.cudnn.allow_tf32 = True  # torch's default; no convolutions here


@torch.no_grad()
def forward(state: dict) -> torch.Tensor:
    return state["model"](input_ids=state["ids"]).last_hidden_state
