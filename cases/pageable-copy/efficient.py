"""pageable-copy, efficient side: the loader pins its batches (DataLoader(pin_memory=True))
and they are copied with `.to(device, non_blocking=True)`: a direct DMA at the link's
bandwidth, queued on the stream, the host free to launch the step's kernels behind it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"


def setup(device, small):
    return workload.setup(device, small, pin=True)


def step(state):
    images, labels = workload.next_batch(state)
    images = images.to(state["device"], non_blocking=True)
    labels = labels.to(state["device"], non_blocking=True)
    return workload.train_step(state, images, labels)


if __name__ == "__main__":
    casekit.main(__name__)
