"""sd-279, efficient side: the same stage with TF32 allowed for cuBLAS and cuDNN
(the fix in the issue: torch.backends.cuda.matmul.allow_tf32 = True)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def configure(state):
    workload.set_tf32(enabled=True)


step = workload.forward


if __name__ == "__main__":
    casekit.main(__name__)
