"""cpu-busy-wait, wasteful side: the host polls the GPU (torch.cuda.Event.query() in a
tight loop) until the work is done, burning a CPU core for the whole GPU time."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


configure = workload.configure


def step(state):
    out = workload.queue_work(state)
    done = torch.cuda.Event()
    done.record()
    while not done.query():
        pass
    return out


if __name__ == "__main__":
    casekit.main(__name__)
