"""sd-279, wasteful side: the UNet stage in fp32 with TF32 off for cuBLAS and cuDNN,
so every convolution and GEMM runs on the FP32 pipeline instead of the tensor cores."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def configure(state):
    workload.set_tf32(enabled=False)


step = workload.forward


if __name__ == "__main__":
    casekit.main(__name__)
