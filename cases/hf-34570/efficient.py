"""hf-34570, efficient side: torch.linalg.eigvalsh, the symmetric solver, which runs on
the GPU (cuSOLVER syevd) and returns real eigenvalues in ascending order."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


@torch.no_grad()
def step(state):
    mean, cov = workload.statistics(state)
    eigenvalues = torch.linalg.eigvalsh(cov)
    is_psd = bool((eigenvalues > 0).all())
    return eigenvalues, workload.new_rows(mean, cov, is_psd)


if __name__ == "__main__":
    casekit.main(__name__)
