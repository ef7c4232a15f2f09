"""A UNet-like stack of convolutions and linear layers in float32 with TF32
off (variant "fp32") or on (variant "tf32") for cuDNN and cuBLAS. On a CPU
the flag changes nothing: the two variants then run the same kernels."""

from __future__ import annotations

import torch
from torch import nn

from magneton.demo import common

SIZES = {  # channels, image side, batch
    "tiny": (8, 16, 1),
    "small": (32, 32, 2),
    "medium": (64, 64, 8),
    "full": (128, 64, 16),
}


class Block(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.norm = nn.GroupNorm(8 if cout % 8 == 0 else 1, cout)
        self.proj = nn.Linear(cout, cout)

    def forward(self, x):
        h = self.conv2(torch.relu(self.norm(self.conv1(x))))
        # A per-pixel projection, as the attention and feed-forward parts of a diffusion UNet have.
        return h + self.proj(h.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class UNetLike(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.down1, self.down2 = Block(3, c), Block(c, 2 * c)
        self.mid = Block(2 * c, 2 * c)
        self.up = Block(3 * c, c)
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(nn.functional.avg_pool2d(d1, 2))
        m = self.mid(d2)
        u = nn.functional.interpolate(m, scale_factor=2.0, mode="nearest")
        return self.out(self.up(torch.cat([u, d1], dim=1)))


def run(args, device: str) -> None:
    """Records args.variant's two passes (common.record_passes) on `device`."""
    size = args.size if args.size != "auto" else ("full" if device == "cuda" else "small")
    channels, side, batch = SIZES[size]
    on = args.variant == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    torch.manual_seed(args.seed)
    model = UNetLike(channels).eval().to(device)
    x = torch.randn(batch, 3, side, side, generator=torch.Generator().manual_seed(1)).to(device)
    common.say(f"UNet-like {size}: {channels} channels, {side}x{side}, batch {batch}, on {device}, "
               f"TF32 {'on' if on else 'off'}")
    common.record_passes(args, lambda: model(x), device, args.variant)


def main() -> None:
    args = common.parse_args(__doc__, ("fp32", "tf32"))
    run(args, common.pick_device(torch, args.device))


if __name__ == "__main__":
    main()
