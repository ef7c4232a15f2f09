"""A masked squared-error loss computed chunk by chunk, the way a per-sample or per-layer
loss is summed in a training step: 64 chunks of 8 x 2048 fp32 predictions and targets, a
boolean validity mask that keeps about half of the elements. Both sides add up the same
squared differences of the kept elements; they differ only in how the mask is applied."""
import torch

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    chunks, rows, cols = (4, 2, 16) if small else (64, 8, 2048)
    pred = torch.randn(chunks, rows, cols)
    target = torch.randn(chunks, rows, cols)
    mask = torch.rand(chunks, rows, cols) > 0.5
    return {"pred": pred.to(device), "target": target.to(device), "mask": mask.to(device)}


def masked_loss(state: dict, squared_kept) -> torch.Tensor:
    """The loss summed chunk by chunk; squared_kept(pred, target, mask) is the side's way of
    squaring the differences of the kept elements."""
    loss = torch.zeros((), device=state["pred"].device)
    for pred, target, mask in zip(state["pred"], state["target"], state["mask"]):
        loss = loss + squared_kept(pred, target, mask).sum()
    return loss
