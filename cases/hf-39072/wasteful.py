"""hf-39072, wasteful side: every per-head tensor is resharded into a fresh contiguous
buffer: q, k and v after the head transpose, k and v again when the 4 key/value heads
are materialized for all 16 query heads (repeat_kv), and the output after the
transpose back. Five copies per layer that the attention kernel does not need."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"
setup = workload.setup


def repeat_kv(t, n_rep):
    b, kv, s, d = t.shape
    return t[:, :, None].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


@torch.no_grad()
def step(state):
    x = state["hidden"]
    b, s, _ = x.shape
    d = state["head_dim"]
    for layer in state["layers"]:
        q = layer.q_proj(x).view(b, s, -1, d).transpose(1, 2).contiguous()
        k = layer.k_proj(x).view(b, s, -1, d).transpose(1, 2).contiguous()
        v = layer.v_proj(x).view(b, s, -1, d).transpose(1, 2).contiguous()
        n_rep = state["heads"] // state["kv_heads"]
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + layer.o_proj(a.transpose(1, 2).contiguous().view(b, s, -1))
    return x


if __name__ == "__main__":
    casekit.main(__name__)
