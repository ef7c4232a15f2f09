"""pageable-copy, wasteful side: the loader's batches lie in ordinary (pageable) host memory
and are copied with a blocking `.to(device)`: the driver stages each batch through a bounce
buffer at a fraction of the link's bandwidth, and the host waits for the copy before it can
launch the step's kernels."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"


def setup(device, small):
    return workload.setup(device, small, pin=False)


def step(state):
    images, labels = workload.next_batch(state)
    images, labels = images.to(state["device"]), labels.to(state["device"])
    return workload.train_step(state, images, labels)


if __name__ == "__main__":
    casekit.main(__name__)
