"""pytorch-3929, efficient side: the fused Adam (fused=True): one multi-tensor kernel
updates every parameter in a few launches."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
step = workload.step


def setup(device, small):
    return workload.setup(device, small, fused=True)


if __name__ == "__main__":
    casekit.main(__name__)
