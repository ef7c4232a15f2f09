"""sync-per-layer, wasteful side: a forward hook on every decoder layer calls
torch.cuda.synchronize() (to timestamp the layer): the host waits for the device after each
layer, and the device idles while the host launches the next layer's kernels."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
step = workload.step


def setup(device, small):
    state = workload.setup(device, small)
    for layer in workload.layers(state):
        layer.register_forward_hook(workload.timing_hook(state))
    return state


if __name__ == "__main__":
    casekit.main(__name__)
