"""hf-28005, wasteful side: attn_implementation="eager": transformers' own attention,
scores = q @ k^T, softmax, dropout, @ v, with the (8, 12, 512, 512) score tensor
materialized in every layer."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
step = workload.step


def setup(device, small):
    return workload.setup(device, small, attn_implementation="eager")


if __name__ == "__main__":
    casekit.main(__name__)
