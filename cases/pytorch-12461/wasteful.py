"""pytorch-12461, wasteful side: the kept elements selected by boolean-mask indexing. On a
CUDA tensor `x[mask]` calls nonzero, whose output size only the device knows: the host waits
for the device (a synchronization) at every chunk before it can launch the next kernel."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def squared_kept(pred, target, mask):
    d = pred[mask] - target[mask]
    return d * d


@torch.no_grad()
def step(state):
    return workload.masked_loss(state, squared_kept)


if __name__ == "__main__":
    casekit.main(__name__)
