"""A stack of Flux-style single-stream transformer blocks (joint attention over text and
image tokens, a parallel MLP, one output projection), bf16 on the GPU. The image
tokens of a 512x512 picture (1024) and 256 text tokens, as the pipeline feeds them.
The two sides differ only in where the text and image streams are joined and split."""
import torch
import torch.nn.functional as F
from torch import nn

import casekit  # on sys.path: the variant put cases/ there


class SingleStreamBlock(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.mlp = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(5 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        h = self.norm(x)
        q, k, v = self.qkv(h).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        m = F.gelu(self.mlp(h), approximate="tanh")
        return x + self.out(torch.cat([a, m], dim=-1))


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    if small:
        dim, heads, depth, img, txt = 32, 2, 2, 16, 4
    else:
        dim, heads, depth, img, txt = 1536, 12, 8, 1024, 256
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    blocks = nn.ModuleList(SingleStreamBlock(dim, heads) for _ in range(depth)).eval()
    image = torch.randn(1, img, dim)
    text = torch.randn(1, txt, dim)
    return {"blocks": blocks.to(device, dtype),
            "image": image.to(device, dtype), "text": text.to(device, dtype)}
