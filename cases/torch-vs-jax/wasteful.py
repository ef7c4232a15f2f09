"""torch-vs-jax, PyTorch side (eager): F.conv2d then ReLU per layer on NCHW tensors, cuDNN
with its default TF32 convolutions. Which side costs more on the H200 is what the
ground truth decides; this side is listed first because eager mode launches the bias
and ReLU of every layer as separate kernels that XLA fuses."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
SYNC_EACH_ITERATION = True  # paced like its JAX peer, which waits for each result


def setup(device, small):
    data = workload.arrays(small)
    layers = [(torch.from_numpy(w).to(device), torch.from_numpy(b).to(device)) for w, b in data["layers"]]
    return {"layers": layers, "x": torch.from_numpy(data["x"]).to(device)}


def configure(state):
    torch.backends.cudnn.allow_tf32 = True  # torch's default for convolutions


@torch.no_grad()
def step(state):
    x = state["x"]
    for w, b in state["layers"]:
        x = F.relu(F.conv2d(x, w, b, padding=1))
    return x


if __name__ == "__main__":
    casekit.main(__name__)
