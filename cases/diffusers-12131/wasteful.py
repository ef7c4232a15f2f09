"""diffusers-12131, wasteful side: every block joins the text and image streams with
torch.cat before its attention and splits them again after, so each block pays a
full copy of the joint hidden states that the next block immediately undoes."""
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
    n_text = text.shape[1]
    for block in state["blocks"]:
        joint = block(torch.cat([text, image], dim=1))
        text, image = joint[:, :n_text], joint[:, n_text:]
    return text, image


if __name__ == "__main__":
    casekit.main(__name__)
