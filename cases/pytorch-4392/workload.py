"""A stack of convolutions whose shapes cuDNN's heuristics are not tuned for: 5x5 and 3x3
kernels, a 7x7 stride-2 stem and a grouped 3x3, on a batch of 16 fp32 maps of 112x112 (TF32
as torch's default allows it for cuDNN). Both sides hold the same weights and input; they
differ only in torch.backends.cudnn.benchmark, which lets cuDNN time its algorithms for each
shape once and keep the fastest instead of taking the heuristic's pick."""
import torch
from torch import nn

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    c, batch, hw = (4, 2, 16) if small else (32, 16, 112)
    model = nn.Sequential(
        nn.Conv2d(3, c, 7, stride=2, padding=3), nn.ReLU(),
        nn.Conv2d(c, 2 * c, 5, padding=2), nn.ReLU(),
        nn.Conv2d(2 * c, 2 * c, 3, padding=1, groups=2), nn.ReLU(),
        nn.Conv2d(2 * c, 4 * c, 5, padding=2), nn.ReLU(),
        nn.Conv2d(4 * c, 4 * c, 3, padding=1), nn.ReLU(),
    ).eval()
    x = torch.randn(batch, 3, 2 * hw, 2 * hw)
    return {"model": model.to(device), "x": x.to(device)}


@torch.no_grad()
def step(state):
    return state["model"](state["x"])


def benchmark(on: bool):
    """The side's configure hook: the flag is global, so each side sets its own before it runs."""
    def configure(state: dict) -> None:
        torch.backends.cudnn.benchmark = on
    return configure
