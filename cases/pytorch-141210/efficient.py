"""pytorch-141210, the side the report called efficient: the same projection as
torch.mm(x, W) followed by a separate broadcast add of the bias."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


configure = workload.configure


@torch.no_grad()
def step(state):
    conv, x = state["conv"], state["hidden"]
    out = torch.mm(x.view(-1, x.size(-1)), conv.weight) + conv.bias
    return out.view(*x.shape[:-1], conv.nf)


if __name__ == "__main__":
    casekit.main(__name__)
