"""pytorch-3929, wasteful side: Adam's single-tensor path (foreach=False): a loop over the
parameters in Python, a handful of small kernels for each one."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
step = workload.step


def setup(device, small):
    return workload.setup(device, small, foreach=False)


if __name__ == "__main__":
    casekit.main(__name__)
