"""hf-28005, efficient side: attn_implementation="sdpa": torch's
scaled_dot_product_attention, one fused kernel per layer that never materializes the scores."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
step = workload.step


def setup(device, small):
    return workload.setup(device, small, attn_implementation="sdpa")


if __name__ == "__main__":
    casekit.main(__name__)
