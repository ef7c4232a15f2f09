"""BERT-base's encoder (12 layers, hidden 768, 12 heads) from a config with random weights,
fp16 on the GPU (fp32 on the CPU), over 8 sequences of 512 tokens. Both sides build the same
model from the same seed and run the same inputs; they differ only in the attention
implementation transformers dispatches to (config._attn_implementation)."""
import copy

import torch
from transformers import BertConfig, BertModel

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool, attn_implementation: str) -> dict:
    casekit.seed(0)
    if small:
        cfg = BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                         vocab_size=100, max_position_embeddings=32)
        batch, seq = 2, 16
    else:
        cfg = BertConfig()  # bert-base-uncased's shape
        batch, seq = 8, 512
    cfg = copy.deepcopy(cfg)  # the implementation is a field of the config: one config per model
    cfg._attn_implementation = attn_implementation
    model = BertModel(cfg, add_pooling_layer=False).eval()
    dtype = torch.float16 if device == "cuda" else torch.float32
    ids = torch.randint(0, cfg.vocab_size, (batch, seq))
    return {"model": model.to(device, dtype), "ids": ids.to(device)}


@torch.no_grad()
def step(state):
    return state["model"](input_ids=state["ids"]).last_hidden_state
