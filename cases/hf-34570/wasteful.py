"""hf-34570, wasteful side: torch.linalg.eigvals, the general (non-symmetric) eigen
solver, on a covariance matrix that is symmetric by construction. On a CUDA tensor it
copies the matrix to the host and runs LAPACK's geev there: the GPU idles while the CPU
works, and the eigenvalues come back complex."""
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
    eigenvalues = torch.linalg.eigvals(cov).real.sort().values
    is_psd = bool((eigenvalues > 0).all())
    return eigenvalues, workload.new_rows(mean, cov, is_psd)


if __name__ == "__main__":
    casekit.main(__name__)
