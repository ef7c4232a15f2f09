"""A ResNet-style stack of 3x3 convolutions with ReLU (64 -> 128 -> 256 channels, one
stride-2 stage) on a batch of 32 feature maps of 56x56, bf16 on the GPU (fp32 on the
CPU). The two sides hold the same weights and input values; they differ only in the
memory format of the weights and activations."""
import torch
from torch import nn

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    c, batch, hw = (8, 2, 12) if small else (64, 32, 56)
    model = nn.Sequential(
        nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(),
        nn.Conv2d(2 * c, 2 * c, 3, padding=1), nn.ReLU(),
        nn.Conv2d(2 * c, 4 * c, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(4 * c, 4 * c, 3, padding=1), nn.ReLU(),
        nn.Conv2d(4 * c, 4 * c, 3, padding=1), nn.ReLU(),
    ).eval()
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    x = torch.randn(batch, c, hw, hw)
    return {"model": model.to(device, dtype), "x": x.to(device, dtype)}


def configure(state: dict) -> None:
    torch.backends.cudnn.benchmark = False  # torch's default, the same on both sides
