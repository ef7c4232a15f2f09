"""pytorch-4392, wasteful side: torch.backends.cudnn.benchmark = False (torch's default):
cuDNN's heuristic picks each convolution's algorithm."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup
step = workload.step
configure = workload.benchmark(False)


if __name__ == "__main__":
    casekit.main(__name__)
