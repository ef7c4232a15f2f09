"""hf-38977, efficient side: slice the hidden states to the last position before the LM head
(logits_to_keep=1, what generate() asks for after the fix): one row of logits
per prompt instead of 512."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def step(state):
    return workload.next_token_logits(state, logits_to_keep=1)


if __name__ == "__main__":
    casekit.main(__name__)
