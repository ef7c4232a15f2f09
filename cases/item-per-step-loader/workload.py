"""Training an image classifier (ResNetForImageClassification from a ResNetConfig with random
weights: the ResNet-34 layout, basic blocks 3-4-6-3 of widths 64 to 512, 100 classes) with SGD
on batches of 32 images that the training loop's data loader prepares on the host, in the main
process, as `DataLoader(num_workers=0)` (the default) does: for each image a random 224 x 224
crop of a 256 x 256 uint8 picture, a random horizontal flip, conversion to float and
scaling to [0, 1], then the batch stacked into pinned memory and copied with non_blocking=True
(the per-channel normalization runs on the device).
One iteration of the case is one logging interval of LOG_EVERY optimizer steps. The augmentation
draws from a generator seeded per step, so both sides train on the same batches; they differ
only in when the loss is read back to the host."""
import numpy as np
import torch
from transformers import ResNetConfig, ResNetForImageClassification

import casekit  # on sys.path: the variant put cases/ there

LOG_EVERY = 3  # optimizer steps per logging interval (one iteration of the case)


def config(small: bool) -> ResNetConfig:
    if small:
        return ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic",
                            num_labels=10)
    return ResNetConfig(embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[3, 4, 6, 3],
                        layer_type="basic", num_labels=100)


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    cfg = config(small)
    model = ResNetForImageClassification(cfg).to(device).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    batch, size, crop = (4, 40, 32) if small else (32, 256, 224)
    rng = np.random.default_rng(0)
    # The dataset's decoded pictures, in host memory (a loader's decoded files).
    pictures = rng.integers(0, 256, size=(4 * batch, size, size, 3), dtype=np.uint8)
    labels = rng.integers(0, cfg.num_labels, size=(4 * batch,))
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1)
    return {"model": model, "opt": opt, "pictures": pictures, "labels": labels, "batch": batch, "crop": crop,
            "mean": mean, "std": std, "step": 0, "device": torch.device(device), "log": []}


def load_batch(state: dict):
    """The loader's work for one step, on the host: crop, flip and scale to [0, 1] each picture,
    stack the batch, copy it; the per-channel normalization runs on the device after the copy
    (as a GPU transform would)."""
    n, crop, pictures = state["batch"], state["crop"], state["pictures"]
    rng = np.random.default_rng(1000 + state["step"])
    picks = rng.choice(len(pictures), size=n, replace=False)
    images = np.empty((n, 3, crop, crop), dtype=np.float32)
    for i, p in enumerate(picks):
        y, x = rng.integers(0, pictures.shape[1] - crop + 1, size=2)
        img = pictures[p, y:y + crop, x:x + crop]
        if rng.random() < 0.5:
            img = img[:, ::-1]
        images[i] = img.transpose(2, 0, 1)
    images *= 1.0 / 255.0
    host = torch.from_numpy(images)
    labels = torch.from_numpy(state["labels"][picks])
    if state["device"].type == "cuda":  # DataLoader(pin_memory=True), then an asynchronous copy
        host, labels = host.pin_memory(), labels.pin_memory()
    images = host.to(state["device"], non_blocking=True)
    return (images - state["mean"]) / state["std"], labels.to(state["device"], non_blocking=True)


def train_step(state: dict) -> torch.Tensor:
    """One optimizer step on the loader's next batch; returns the loss, still on the device."""
    images, labels = load_batch(state)
    state["step"] += 1
    out = state["model"](pixel_values=images, labels=labels)
    out.loss.backward()
    state["opt"].step()
    state["opt"].zero_grad(set_to_none=True)
    return out.loss.detach()


def outputs(state: dict, mean_loss: float):
    """The interval's mean loss as logged, and a trained parameter (the classifier's bias)."""
    state["log"].append(mean_loss)
    return [torch.tensor([mean_loss], dtype=torch.float64), state["model"].classifier[-1].bias.detach()]
