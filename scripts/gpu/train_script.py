"""An ordinary float32 training script, as a user would record it whole with
`magneton record -- python train_script.py` (no Magneton code in it): set-up
(an MLP of `--layers` linear layers with random weights), a warm-up step, a
loop of training steps (forward, loss, backward, SGD), a summary. Switches
model the differences the kernel-level diff should find:

    --tf32 on|off   TF32 for float32 matmuls (torch.backends.cuda.matmul.allow_tf32)
    --item          `loss.item()` every step: a 4-byte copy and a synchronize
    --contiguous    a transposed copy of the activations before each layer

It prints one line: the loop's time and, with NVML, the GPU energy over the
loop (the counter read before and after, the loop synchronized): the ground
truth the diff's per-iteration figures are compared with.

    python train_script.py --tf32 off --iters 300 [--width 4096] [--layers 8] [--batch 256]
"""
import argparse
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--tf32", choices=("on", "off"), default="off")
p.add_argument("--item", action="store_true")
p.add_argument("--contiguous", action="store_true")
p.add_argument("--iters", type=int, default=300)
p.add_argument("--width", type=int, default=4096)
p.add_argument("--layers", type=int, default=8)
p.add_argument("--batch", type=int, default=256)
p.add_argument("--tiny", action="store_true", help="a small model on the CPU (to try the script)")
a = p.parse_args()

device = "cpu" if a.tiny or not torch.cuda.is_available() else "cuda"
torch.backends.cuda.matmul.allow_tf32 = a.tf32 == "on"
torch.manual_seed(0)
width, batch = (64, 8) if a.tiny else (a.width, a.batch)
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU())
                              for _ in range(a.layers)]).to(device)
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(batch, width, device=device)
y = torch.randn(batch, width, device=device)


def step():
    h = x
    for layer in model:
        if a.contiguous:
            h = h.t().contiguous().t()
        h = layer(h)
    loss = torch.nn.functional.mse_loss(h, y)
    opt.zero_grad(set_to_none=False)
    loss.backward()
    opt.step()
    return loss.item() if a.item else loss


def energy_j():
    if device != "cuda":
        return None
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        return pynvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1e3
    except Exception:
        return None


step()  # warm-up: cuBLAS picks its kernels
if device == "cuda":
    torch.cuda.synchronize()
e0, t0 = energy_j(), time.perf_counter()
for _ in range(a.iters):
    loss = step()
if device == "cuda":
    torch.cuda.synchronize()
elapsed, e1 = time.perf_counter() - t0, energy_j()
joules = f"{(e1 - e0) / a.iters * 1e3:.2f} mJ" if e0 is not None and e1 is not None else "unmeasured"
print(f"train_script: {a.iters} steps (tf32 {a.tf32}, item {a.item}, contiguous {a.contiguous}) in {elapsed:.3f} s: "
      f"{elapsed / a.iters * 1e3:.3f} ms and {joules} per step; loss {loss if a.item else loss.detach().item():.5f}")
