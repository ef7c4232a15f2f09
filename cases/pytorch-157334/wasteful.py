"""pytorch-157334, wasteful side: Conv2d on NCHW (torch's default contiguous format)."""
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
    return state["model"](state["x"])


if __name__ == "__main__":
    casekit.main(__name__)
