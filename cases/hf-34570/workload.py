"""The positive-definiteness check that transformers' resize_token_embeddings(mean_resizing=True)
ran before sampling new token embeddings: mean and covariance of the old embedding matrix
(GPT-2 medium's token embeddings: 50257 x 1024, from a config with random weights), the
eigenvalues of the 1024x1024 covariance, then 16 new rows drawn from a normal
distribution around the mean. Both sides compute the same statistics on the same matrix."""
import torch
from transformers import GPT2Config, GPT2Model

import casekit  # on sys.path: the variant put cases/ there

NEW_TOKENS = 16


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    if small:
        cfg = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=500, n_positions=16,
                         bos_token_id=499, eos_token_id=499)
    else:
        cfg = GPT2Config(n_layer=1, n_embd=1024, n_head=16)  # GPT-2 medium's embedding width
    weight = GPT2Model(cfg).wte.weight.detach().clone()
    return {"weight": weight.to(device)}


def statistics(state: dict) -> tuple[torch.Tensor, torch.Tensor]:
    old = state["weight"].to(torch.float32)
    mean = old.mean(dim=0)
    centered = old - mean
    return mean, centered.T @ centered / old.shape[0]


def new_rows(mean: torch.Tensor, covariance: torch.Tensor, is_psd: bool) -> torch.Tensor:
    """Sampled rows when the covariance is positive definite, else the mean (as transformers does)."""
    if not is_psd:
        return mean.expand(NEW_TOKENS, -1).clone()
    gen = torch.Generator(device=mean.device).manual_seed(1)
    noise = torch.randn(NEW_TOKENS, mean.numel(), generator=gen, device=mean.device)
    scale = torch.linalg.cholesky(1e-9 * covariance)
    return mean + noise @ scale.T
