"""cuda-graph-step, wasteful side: the decoding step runs eagerly: every operator goes
through PyTorch's dispatcher and launches its kernels one by one from the host, and the
device, done with each tiny kernel long before the next arrives, idles in between."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def step(state):
    return workload.decode_step(state["model"], state["ids"])


if __name__ == "__main__":
    casekit.main(__name__)
