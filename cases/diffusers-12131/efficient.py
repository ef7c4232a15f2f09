"""diffusers-12131, efficient side: join the streams once before the stack of blocks
and split once after it; the blocks see the same joint sequence."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


@torch.no_grad()
def step(state):
    text, image = state["text"], state["image"]
    joint = torch.cat([text, image], dim=1)
    for block in state["blocks"]:
        joint = block(joint)
    n_text = text.shape[1]
    return joint[:, :n_text], joint[:, n_text:]


if __name__ == "__main__":
    casekit.main(__name__)
