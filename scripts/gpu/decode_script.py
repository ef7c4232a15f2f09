"""A user's greedy decoding loop, written by hand as scripts often do: a
GPT-2 small (random weights, fp16 on the GPU) continues a batch of prompts one
token per step, with the KV cache (`--cache`) or recomputing the whole
sequence each step. Prints the loop's own time per token (the ground truth
the diff's saving is held against) and the tokens (equal on both sides).

    python decode_script.py [--cache] [--tokens 128] [--batch 4] [--prompt 128] [--tiny]
"""
import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

p = argparse.ArgumentParser()
p.add_argument("--cache", action="store_true")
p.add_argument("--tokens", type=int, default=128)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--prompt", type=int, default=128)
p.add_argument("--tiny", action="store_true", help="a 2-layer model on the CPU (to try the script)")
a = p.parse_args()

device = "cpu" if a.tiny or not torch.cuda.is_available() else "cuda"
torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=512) if a.tiny else GPT2Config()
model = GPT2LMHeadModel(config).to(device).eval()
if device == "cuda":
    model = model.half()
ids = torch.randint(0, config.vocab_size, (a.batch, a.prompt), device=device)

t0 = time.perf_counter()
with torch.no_grad():
    past = None
    for pos in range(a.tokens):
        if a.cache:
            out = model(ids if past is None else ids[:, -1:], past_key_values=past, use_cache=True)
            past = out.past_key_values
        else:
            out = model(ids, use_cache=False)
        ids = torch.cat([ids, out.logits[:, -1].argmax(-1, keepdim=True)], dim=1)
if device == "cuda":
    torch.cuda.synchronize()
elapsed = time.perf_counter() - t0
print(f"{a.tokens} tokens ({'cache' if a.cache else 'no cache'}) in {elapsed:.3f} s: "
      f"{elapsed / a.tokens * 1e3:.3f} ms per token; tokens {ids[0, a.prompt:a.prompt + 8].tolist()}")
