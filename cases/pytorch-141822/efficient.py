"""pytorch-141822, efficient side: log_softmax over the contiguous vocabulary
dimension, then gather the label's entry; ignored positions give 0 as cross_entropy does."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


@torch.no_grad()
def step(state):
    logits, labels = state["logits"], state["labels"]
    keep = labels != workload.IGNORE
    picked = F.log_softmax(logits, dim=-1).gather(-1, (labels * keep).unsqueeze(-1)).squeeze(-1)
    return picked * keep


if __name__ == "__main__":
    casekit.main(__name__)
