"""pytorch-4392, efficient side: torch.backends.cudnn.benchmark = True: cuDNN times its
algorithms once per shape (in the warm-up) and keeps the fastest."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup
step = workload.step
configure = workload.benchmark(True)


if __name__ == "__main__":
    casekit.main(__name__)
