"""Training a GPT-2-like language model (GPT2LMHeadModel from a GPT2Config with random
weights: 6 layers of width 768) with AdamW on batches of 16 sequences of 256 tokens; one
iteration of the case is one logging interval of 10 optimizer steps. Dropout is off so that
both sides take the same steps. Both sides train identically and report the interval's mean
loss; they differ only in when the loss is read back to the host."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import casekit  # on sys.path: the variant put cases/ there

LOG_EVERY = 10  # optimizer steps per logging interval (one iteration of the case)


def config(small: bool) -> GPT2Config:
    drop = dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    if small:
        return GPT2Config(vocab_size=256, n_positions=64, n_embd=64, n_layer=2, n_head=4, bos_token_id=0,
                          eos_token_id=0, **drop)
    return GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12, **drop)


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    cfg = config(small)
    model = GPT2LMHeadModel(cfg).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch, seq = (2, 16) if small else (16, 256)
    # A few batches of the dataset, already on the device, taken in turn.
    batches = [torch.randint(0, cfg.vocab_size, (batch, seq)).to(device) for _ in range(4)]
    return {"model": model, "opt": opt, "batches": batches, "step": 0, "log": []}


def train_step(state: dict) -> torch.Tensor:
    """One optimizer step; returns the loss, still on the device."""
    ids = state["batches"][state["step"] % len(state["batches"])]
    state["step"] += 1
    loss = state["model"](ids, labels=ids).loss
    loss.backward()
    state["opt"].step()
    state["opt"].zero_grad(set_to_none=True)
    return loss.detach()


def outputs(state: dict, mean_loss: float):
    """The interval's mean loss as logged, and a trained parameter (the final layer norm)."""
    state["log"].append(mean_loss)
    return [torch.tensor([mean_loss], dtype=torch.float64), state["model"].transformer.ln_f.weight.detach()]
