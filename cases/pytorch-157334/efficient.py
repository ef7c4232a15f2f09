"""pytorch-157334, efficient side: the same convolutions with weights and input in
channels_last (NHWC), the layout cuDNN's tensor-core kernels read natively."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"


def setup(device, small):
    state = workload.setup(device, small)
    state["model"] = state["model"].to(memory_format=torch.channels_last)
    state["x"] = state["x"].contiguous(memory_format=torch.channels_last)
    return state


configure = workload.configure


@torch.no_grad()
def step(state):
    return state["model"](state["x"])


if __name__ == "__main__":
    casekit.main(__name__)
