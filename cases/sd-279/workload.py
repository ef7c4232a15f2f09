"""A UNet-like stage of Stable Diffusion 1.x in fp32: conv_in, two pairs of
(ResBlock, SpatialTransformer with self- and cross-attention and a GEGLU MLP), conv_out,
on a 64x64 latent with a 77-token text context and classifier-free guidance (batch 2).
Convolutions go to cuDNN and linears/attention to cuBLAS, so both TF32 switches matter."""
import torch
import torch.nn.functional as F
from torch import nn

import casekit  # on sys.path: the variant put cases/ there


class ResBlock(nn.Module):
    def __init__(self, ch: int, temb_ch: int, groups: int):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(groups, ch), nn.Conv2d(ch, ch, 3, padding=1)
        self.temb = nn.Linear(temb_ch, ch)
        self.norm2, self.conv2 = nn.GroupNorm(groups, ch), nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        return x + self.conv2(F.silu(self.norm2(h)))


class Attention(nn.Module):
    def __init__(self, ch: int, ctx_ch: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(ch, ch, bias=False)
        self.k = nn.Linear(ctx_ch, ch, bias=False)
        self.v = nn.Linear(ctx_ch, ch, bias=False)
        self.o = nn.Linear(ch, ch)

    def forward(self, x, ctx):
        b, n, c = x.shape
        split = lambda t: t.view(b, -1, self.heads, c // self.heads).transpose(1, 2)  # noqa: E731
        a = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(ctx)), split(self.v(ctx)))
        return self.o(a.transpose(1, 2).reshape(b, n, c))


class SpatialTransformer(nn.Module):
    def __init__(self, ch: int, ctx_ch: int, heads: int, groups: int):
        super().__init__()
        self.norm, self.proj_in, self.proj_out = nn.GroupNorm(groups, ch), nn.Linear(ch, ch), nn.Linear(ch, ch)
        self.ln1, self.attn1 = nn.LayerNorm(ch), Attention(ch, ch, heads)
        self.ln2, self.attn2 = nn.LayerNorm(ch), Attention(ch, ctx_ch, heads)
        self.ln3, self.ff_in, self.ff_out = nn.LayerNorm(ch), nn.Linear(ch, 8 * ch), nn.Linear(4 * ch, ch)

    def forward(self, x, ctx):
        b, c, h, w = x.shape
        t = self.proj_in(self.norm(x).flatten(2).transpose(1, 2))
        t = t + self.attn1(self.ln1(t), self.ln1(t))
        t = t + self.attn2(self.ln2(t), ctx)
        a, gate = self.ff_in(self.ln3(t)).chunk(2, dim=-1)
        t = t + self.ff_out(a * F.gelu(gate))
        return x + self.proj_out(t).transpose(1, 2).reshape(b, c, h, w)


class UNetStage(nn.Module):
    def __init__(self, ch: int, ctx_ch: int, heads: int, groups: int):
        super().__init__()
        self.conv_in = nn.Conv2d(4, ch, 3, padding=1)
        self.blocks = nn.ModuleList()
        for _ in range(2):
            self.blocks.append(ResBlock(ch, 4 * ch, groups))
            self.blocks.append(SpatialTransformer(ch, ctx_ch, heads, groups))
        self.norm_out, self.conv_out = nn.GroupNorm(groups, ch), nn.Conv2d(ch, 4, 3, padding=1)

    def forward(self, latent, temb, ctx):
        x = self.conv_in(latent)
        for blk in self.blocks:
            x = blk(x, temb) if isinstance(blk, ResBlock) else blk(x, ctx)
        return self.conv_out(F.silu(self.norm_out(x)))


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    if small:
        ch, ctx_ch, heads, groups, hw, ctx_len = 32, 16, 2, 8, 8, 8
    else:
        ch, ctx_ch, heads, groups, hw, ctx_len = 320, 768, 8, 32, 64, 77
    model = UNetStage(ch, ctx_ch, heads, groups).eval()
    inputs = (torch.randn(2, 4, hw, hw), torch.randn(2, 4 * ch), torch.randn(2, ctx_len, ctx_ch))
    return {"model": model.to(device), "inputs": [t.to(device) for t in inputs]}


def set_tf32(enabled: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled


@torch.no_grad()
def forward(state: dict) -> torch.Tensor:
    return state["model"](*state["inputs"])
