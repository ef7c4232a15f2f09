"""A stack of Llama attention layers with grouped-query attention (16 query heads sharing
4 key/value heads, head size 128), bf16 on the GPU: 4 sequences of 2048 tokens, causal.
The projections come from transformers' LlamaAttention built from a LlamaConfig with
random weights; both sides use the same layers and the same hidden states and differ
only in how the per-head tensors are laid out in memory around the attention kernel."""
import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaAttention

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    if small:
        cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                          num_hidden_layers=2, intermediate_size=128, vocab_size=100)
        batch, seq = 2, 16
    else:
        cfg = LlamaConfig(hidden_size=2048, num_attention_heads=16, num_key_value_heads=4,
                          num_hidden_layers=4, intermediate_size=5632)
        batch, seq = 4, 2048
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    layers = torch.nn.ModuleList(LlamaAttention(cfg, layer_idx=i)
                                 for i in range(cfg.num_hidden_layers)).eval()
    hidden = torch.randn(batch, seq, cfg.hidden_size)
    return {"layers": layers.to(device, dtype), "hidden": hidden.to(device, dtype),
            "heads": cfg.num_attention_heads, "kv_heads": cfg.num_key_value_heads,
            "head_dim": cfg.hidden_size // cfg.num_attention_heads}
