"""hf-39072, efficient side: the head split and merge stay views, and the grouped
key/value heads go to the attention kernel as they are (enable_gqa=True), as
transformers' SDPA integration does when no mask is given."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


@torch.no_grad()
def step(state):
    x = state["hidden"]
    b, s, _ = x.shape
    d = state["head_dim"]
    for layer in state["layers"]:
        q = layer.q_proj(x).view(b, s, -1, d).transpose(1, 2)
        k = layer.k_proj(x).view(b, s, -1, d).transpose(1, 2)
        v = layer.v_proj(x).view(b, s, -1, d).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + layer.o_proj(a.transpose(1, 2).reshape(b, s, -1))
    return x


if __name__ == "__main__":
    casekit.main(__name__)
