"""Memory and file growth of a long recording (docs/benchmarks.md, "Recording
for as long as the program runs").

    python bench/recorder_memory.py [--seconds 600] [--mode ops|plain] [--out FILE.json]

Runs a launch-bound loop (an 8-layer MLP on 4 rows, one thread: tens of
thousands of operators a second on a CPU) for SECONDS, in this process, plain
or inside magneton.record (the operator recorder without fingerprints, the
heaviest recording a long run gets: every operator, tensor and stack row).
Every 10 s it prints the process's resident memory, the rows the recorder
still holds and the run file's size. The goal: resident memory grows by at
most 300 MB over the plain run's, and the file grows with the rows.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--mode", choices=("ops", "plain"), default="ops")
    p.add_argument("--out", default="")
    a = p.parse_args()
    import torch

    import magneton

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)])
    x = torch.randn(4, 64)
    path = os.path.join(tempfile.mkdtemp(), "long.mgt")
    samples = []
    with torch.no_grad():
        for _ in range(20):
            model(x)
        start_rss = rss_mb()
        rec = magneton.record(path, ops=True) if a.mode == "ops" else None
        if rec:
            rec.__enter__()
        t0 = last = time.monotonic()
        steps = 0
        while time.monotonic() - t0 < a.seconds:
            model(x)
            steps += 1
            now = time.monotonic()
            if now - last >= 10:
                last = now
                size = os.path.getsize(path) / 2**20 if rec else 0.0
                s = {"t_s": round(now - t0, 1), "rss_mb": round(rss_mb(), 1), "steps": steps,
                     "rows_held": rec.rows_held() if rec else 0, "file_mb": round(size, 1)}
                samples.append(s)
                print(json.dumps(s), flush=True)
        if rec:
            rec.__exit__(None, None, None)
    result = {"mode": a.mode, "seconds": a.seconds, "steps": steps, "start_rss_mb": start_rss,
              "end_rss_mb": rss_mb(), "ops": (rec.summary or {}).get("ops") if rec else 0,
              "file_mb": os.path.getsize(path) / 2**20 if rec else 0, "samples": samples}
    if rec:
        os.remove(path)  # gigabytes after a few minutes
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
