"""hf-14450, efficient side: the same fp32 model with TF32 matmuls allowed,
so cuBLAS picks tensor-core (TF32) GEMM kernels; outputs agree to ~1e-3."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def configure(state):
    workload.set_tf32(matmul=True)


step = workload.forward


if __name__ == "__main__":
    casekit.main(__name__)
