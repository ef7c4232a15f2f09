"""cpu-busy-wait, efficient side: the host blocks on an event created with
blocking=True (cudaEventBlockingSync), so the thread sleeps until the GPU signals
completion instead of spinning."""
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
    done = torch.cuda.Event(blocking=True)
    done.record()
    done.synchronize()
    return out


if __name__ == "__main__":
    casekit.main(__name__)
