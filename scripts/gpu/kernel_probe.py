"""Which order of events in one process leaves the in-process measured pass
with no kernels (seen 2026-12-05: measured_pass.py overhead recorded 0 kernels
in every pass, while a process whose first recording had fingerprints got them).

    python scripts/gpu/kernel_probe.py ORDER OUT_DIR

ORDER is a comma list run in one process: warm (10 steps), many (2000 steps),
events (10 steps timed with CUDA events), measured (magneton.record, no fingerprints),
recording (fingerprints=True), profiler (torch.profiler around 3 steps).
Prints one line per recording: its kernels and API calls."""
import sqlite3
import sys
from pathlib import Path

import torch

import magneton

order, out = sys.argv[1].split(","), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
x = torch.randn(256, 256, device="cuda")
w = [torch.randn(256, 256, device="cuda") for _ in range(8)]


def step():
    h = x
    for m in w:
        h = torch.relu(h @ m)
    return h


for i, what in enumerate(order):
    if what == "warm":
        for _ in range(10):
            step()
        torch.cuda.synchronize()
    elif what == "many":
        for _ in range(2000):
            step()
        torch.cuda.synchronize()
    elif what == "events":
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(10):
            step()
        b.record()
        b.synchronize()
    elif what == "profiler":
        with torch.profiler.profile():
            for _ in range(3):
                step()
        torch.cuda.synchronize()
    else:
        with magneton.record(str(out / f"{i}-{what}.mgt"), fingerprints=what == "recording", overwrite=True) as rec:
            for _ in range(3):
                step()
            torch.cuda.synchronize()
        db = sqlite3.connect(str(out / f"{i}-{what}.mgt"))
        rows = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("kernels", "api_calls", "stats")}
        db.close()
        print(f"{sys.argv[1]}: #{i} {what}: file rows {rows}, tracer {rec.summary.get('kernel_tracer')}", flush=True)
