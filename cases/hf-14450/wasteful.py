"""hf-14450, wasteful side: fp32 matmuls with TF32 off (torch's default since 1.12),
so every GEMM of the model runs on the FP32 pipeline instead of the tensor cores."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def configure(state):
    workload.set_tf32(matmul=False)


step = workload.forward


if __name__ == "__main__":
    casekit.main(__name__)
