"""item-per-step-loader, efficient side: the losses are added up on the device and read once
per logging interval: the loader prepares the next batch on the host while the device runs the
step before it, and the host waits once every LOG_EVERY steps."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def step(state):
    total = None
    for _ in range(workload.LOG_EVERY):
        loss = workload.train_step(state)
        total = loss.to(torch.float64) if total is None else total + loss
    return workload.outputs(state, total.item() / workload.LOG_EVERY)


if __name__ == "__main__":
    casekit.main(__name__)
