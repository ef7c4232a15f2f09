"""pytorch-141822, wasteful side: F.cross_entropy(reduction="none") over the logits
permuted to (batch, vocab, seq), the K-dimensional form of the loss: the class
dimension is strided, so the log-softmax reads the largest tensor of the step in a
cache-hostile order."""
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
    return -F.cross_entropy(logits.permute(0, 2, 1), labels, reduction="none",
                            ignore_index=workload.IGNORE)


if __name__ == "__main__":
    casekit.main(__name__)
