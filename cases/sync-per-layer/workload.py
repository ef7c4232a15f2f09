"""Inference over a Llama-like decoder (LlamaForCausalLM from a LlamaConfig with random
weights: 16 layers of width 1024, grouped-query attention, ~0.3B parameters) on one prompt
of 256 tokens, the prefill of a single request as an interactive server runs it. Both sides run the
same model on the same tokens; they differ only in what a forward hook on each decoder layer
does."""
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

import casekit  # on sys.path: the variant put cases/ there


def config(small: bool) -> LlamaConfig:
    if small:
        return LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=16,
                       num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048)


def setup(device: str, small: bool) -> dict:
    casekit.seed(0)
    cfg = config(small)
    cfg._attn_implementation = "sdpa"
    model = LlamaForCausalLM(cfg).eval()  # weights drawn on the CPU: the same on both sides
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    model = model.to(device=device, dtype=dtype)
    batch, seq = (2, 16) if small else (1, 256)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq)).to(device)
    return {"model": model, "ids": ids, "device": torch.device(device), "layer_times": []}


def layers(state: dict):
    return state["model"].model.layers


def timing_hook(state: dict):
    """A per-layer timing hook of the kind left in a model after profiling it: it waits for
    the device so that the timestamp means the layer is done (on a CPU there is nothing to
    wait for)."""
    on_cuda = state["device"].type == "cuda"

    def after_layer(module, args, output):
        if on_cuda:
            torch.cuda.synchronize()
        state["layer_times"].append(time.perf_counter())
    return after_layer


@torch.no_grad()
def step(state: dict) -> torch.Tensor:
    state["layer_times"].clear()
    return state["model"](state["ids"], use_cache=False).logits
