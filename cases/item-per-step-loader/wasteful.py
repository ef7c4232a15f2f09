"""item-per-step-loader, wasteful side: `loss.item()` after every optimizer step, for the
logger. Each read waits for the device to finish the step, so the loader's host work for the
next batch starts only then: the device idles while the host crops and normalizes, where it
would otherwise be running the previous step."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def step(state):
    losses = []
    for _ in range(workload.LOG_EVERY):
        loss = workload.train_step(state)
        losses.append(loss.item())
    return workload.outputs(state, sum(losses) / len(losses))


if __name__ == "__main__":
    casekit.main(__name__)
