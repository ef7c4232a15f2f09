# GPT-2 forward loop: python gpt2_loop.py [--iters N] [--loops K] [--layers L] [--profile] [--emit-nvtx]
# Prints LOOP_S <seconds> and LOOP_CPU_S <the loop thread's CPU seconds> for each of the K timed
# loops (K > 1 tells a slow process from a slow loop).
import argparse, json, os, sys, tempfile, time
import torch
from transformers import GPT2Config, GPT2LMHeadModel

p = argparse.ArgumentParser()
p.add_argument("--iters", type=int, default=20)
p.add_argument("--loops", type=int, default=1)
p.add_argument("--layers", type=int, default=12)
p.add_argument("--profile", action="store_true")
p.add_argument("--emit-nvtx", action="store_true")
a = p.parse_args()
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=a.layers)).cuda().eval()
ids = torch.randint(0, 50257, (8, 128), device="cuda")
with torch.no_grad():
    for _ in range(3):  # warm-up (cuBLAS handles, autotuning) outside the measured range
        model(ids)
    torch.cuda.synchronize()

    def loop():
        torch.cuda.nvtx.range_push("magneton:loop")
        t, c = time.perf_counter(), time.thread_time()
        for _ in range(a.iters):
            model(ids)
        torch.cuda.synchronize()
        dt, dc = time.perf_counter() - t, time.thread_time() - c
        torch.cuda.nvtx.range_pop()
        return dt, dc

    def loops():
        return [loop() for _ in range(a.loops)]

    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            dts = loops()
        path = tempfile.mktemp(suffix=".json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
        print("PROFILER_KERNELS", sum(1 for e in events if e.get("cat") == "kernel"))
    elif a.emit_nvtx:
        with torch.autograd.profiler.emit_nvtx():
            dts = loops()
    else:
        dts = loops()
for dt, dc in dts:
    print(f"LOOP_S {dt:.6f}")
    print(f"LOOP_CPU_S {dc:.6f}")  # the launching thread's CPU time: not moved by other tenants' load
