"""A chain of 24 fp32 matmuls of 4096x4096 (tens of milliseconds of GPU work), after
which the host waits for the result before it goes on, as a serving loop or a data
loader handing off to the GPU does. Both sides queue the same work on the same inputs;
they differ only in how the host thread waits."""
import math

import torch

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    if device != "cuda":
        raise SystemExit("cpu-busy-wait: needs a CUDA device (it is about how a host thread waits for the GPU)")
    casekit.seed(0)
    n, chain = (256, 2) if small else (4096, 24)
    w = torch.randn(n, n) / math.sqrt(n)  # keeps the chain's values O(1)
    x = torch.randn(n, n)
    return {"w": w.to(device), "x": x.to(device), "chain": chain}


def configure(state: dict) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False


def queue_work(state: dict) -> torch.Tensor:
    x = state["x"]
    for _ in range(state["chain"]):
        x = torch.mm(state["w"], x)
    return x
