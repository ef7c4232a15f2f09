"""pytorch-141210, the side the report called wasteful: transformers' Conv1D forward,
one torch.addmm(bias, x, W) (bias fused into the GEMM's epilogue by cuBLAS)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


configure = workload.configure


@torch.no_grad()
def step(state):
    return state["conv"](state["hidden"])  # Conv1D.forward: torch.addmm(bias, x2d, W)


if __name__ == "__main__":
    casekit.main(__name__)
