"""A small torch workload for `magneton measure` (scripts/gpu/energy.sh):
N bf16 8192^3 matmuls on GPU 0, printed so measure's --per N --unit matmul
gives joules per matmul (DESIGN.md: ~1.12 J each on the H200)."""
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t0 = time.perf_counter()
for i in range(n):
    c = a @ b
torch.cuda.synchronize()
dt = time.perf_counter() - t0
print(f"{n} matmuls in {dt:.2f} s, {2 * 8192**3 * n / dt / 1e12:.0f} TFLOP/s")
