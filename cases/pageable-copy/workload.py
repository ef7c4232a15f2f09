"""Training an image classifier (ResNetForImageClassification from a ResNetConfig with random
weights: the ResNet-50 layout, 1000 classes) on batches of 64 fp32 images of 224 x 224 that
a data loader prepared in host memory (three batches, taken in turn, as a loader's prefetched
batches are). Each step copies the batch to the device, runs forward and backward, and takes
an SGD step. Both sides train identically; they differ only in the host memory the batch lies
in and how it is copied."""
import torch
from transformers import ResNetConfig, ResNetForImageClassification

import casekit  # on sys.path: the variant put cases/ there


def config(small: bool) -> ResNetConfig:
    if small:
        return ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic",
                            num_labels=10)
    return ResNetConfig(num_labels=1000)  # embedding 64, widths 256..2048, depths 3-4-6-3, bottleneck


def setup(device: str, small: bool, pin: bool) -> dict:
    """pin: the batches lie in page-locked host memory (DataLoader(pin_memory=True)); only a
    CUDA device has page-locked staging, so on a CPU the batches stay where they are."""
    casekit.seed(0)
    cfg = config(small)
    model = ResNetForImageClassification(cfg).to(device).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    batch, size = (4, 32) if small else (64, 224)
    batches = []
    for _ in range(3):
        images = torch.randn(batch, 3, size, size)
        labels = torch.randint(0, cfg.num_labels, (batch,))
        if pin and device == "cuda":
            images, labels = images.pin_memory(), labels.pin_memory()
        batches.append((images, labels))
    return {"model": model, "opt": opt, "batches": batches, "step": 0, "device": torch.device(device)}


def train_step(state: dict, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    out = state["model"](pixel_values=images, labels=labels)
    out.loss.backward()
    state["opt"].step()
    state["opt"].zero_grad(set_to_none=True)
    return out.loss.detach()


def next_batch(state: dict):
    """The host batch the loader hands over next."""
    batch = state["batches"][state["step"] % len(state["batches"])]
    state["step"] += 1
    return batch
