"""An ordinary inference script, as a user would record it whole from the
command line: set-up (a GPT-2 small with random weights, fp16 on the GPU), a
loop of forwards over batches, a summary. `--attn` picks the attention.

    python gpt2_script.py --attn sdpa --iters 200 [--batch 8] [--seq 512]
"""
import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

p = argparse.ArgumentParser()
p.add_argument("--attn", choices=("eager", "sdpa"), default="sdpa")
p.add_argument("--iters", type=int, default=100)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--seq", type=int, default=512)
p.add_argument("--tiny", action="store_true", help="a 2-layer model on the CPU (to try the script)")
a = p.parse_args()

device = "cpu" if a.tiny or not torch.cuda.is_available() else "cuda"
torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=64, n_head=2) if a.tiny else GPT2Config()
model = GPT2LMHeadModel._from_config(config, attn_implementation=a.attn).to(device).eval()
if device == "cuda":
    model = model.half()
batch, seq = (1, 16) if a.tiny else (a.batch, a.seq)
inputs = torch.randint(0, config.vocab_size, (batch, seq), device=device)

t0 = time.perf_counter()
with torch.no_grad():
    for _ in range(a.iters):
        logits = model(inputs).logits
if device == "cuda":
    torch.cuda.synchronize()
elapsed = time.perf_counter() - t0
print(f"{a.iters} forwards ({a.attn}) in {elapsed:.3f} s: {elapsed / a.iters * 1e3:.2f} ms each; "
      f"last logits mean {logits.float().mean().item():.5f}")
