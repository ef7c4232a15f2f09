"""GPT-2's attention input projection (c_attn, transformers' Conv1D 768 -> 2304) over a
batch of 8 sequences of 1024 tokens, fp32 with TF32 off (torch's default).
Both sides use the same Conv1D module (weights and bias) on the same hidden states."""
import torch
from transformers.pytorch_utils import Conv1D

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    width, batch, seq = (16, 2, 8) if small else (768, 8, 1024)
    conv = Conv1D(3 * width, width)  # (nf, nx): GPT-2's c_attn
    torch.nn.init.normal_(conv.bias, std=0.02)  # a trained model's bias is not zero
    hidden = torch.randn(batch, seq, width)
    return {"conv": conv.to(device), "hidden": hidden.to(device)}


def configure(state: dict) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
