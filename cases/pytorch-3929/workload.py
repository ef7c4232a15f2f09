"""An Adam step over many small parameters, the shape of the issue's benchmark: 1000
fp32 parameter tensors of 4096 elements (the issue used 3000 of 3500, a ResNet-1001's
count), each with a fixed gradient. Both sides hold the same parameters, gradients and
hyper-parameters; they differ only in how torch.optim.Adam applies the update."""
import torch

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool, **adam_options) -> dict:
    casekit.seed(0)
    count, numel = (50, 64) if small else (1000, 4096)
    params = [torch.randn(numel).to(device).requires_grad_() for _ in range(count)]
    for p in params:
        p.grad = torch.randn(numel).to(device) * 1e-2
    # lr large enough that one step moves every parameter visibly.
    return {"params": params, "opt": torch.optim.Adam(params, lr=1e-2, **adam_options)}


@torch.no_grad()
def step(state):
    state["opt"].step()
    return state["params"]
