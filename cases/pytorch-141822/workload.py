"""Per-token log-probabilities of label sequences under a language model's logits, as in
the issue's benchmark: batch 2, 512 positions, GPT-2's vocabulary (50257), fp32, with a
third of the labels set to the ignore index (-100). Both sides read the same logits."""
import torch

import casekit  # on sys.path: the variant put cases/ there

IGNORE = -100


def setup(device: str, small: bool) -> dict:
    casekit.seed(42)
    batch, seq, vocab = (2, 16, 100) if small else (2, 512, 50257)
    logits = torch.randn(batch, seq, vocab)
    labels = torch.randint(0, vocab, (batch, seq))
    labels[labels % 3 == 0] = IGNORE
    return {"logits": logits.to(device), "labels": labels.to(device)}
