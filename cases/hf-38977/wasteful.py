"""hf-38977, wasteful side: the LM head projects every position of the prompt onto the
vocabulary (logits_to_keep=0, GPT-2's behaviour before the fix) and the caller keeps
only the last row."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def step(state):
    return workload.next_token_logits(state, logits_to_keep=0)


if __name__ == "__main__":
    casekit.main(__name__)
