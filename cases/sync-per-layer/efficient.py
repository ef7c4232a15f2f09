"""sync-per-layer, efficient side: the same model without the hooks: the host queues every
layer's kernels ahead of the device and waits once, when the logits are read."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup
step = workload.step


if __name__ == "__main__":
    casekit.main(__name__)
