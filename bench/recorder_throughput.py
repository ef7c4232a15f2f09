"""Operators per second the PyTorch recorder sustains (docs/benchmarks.md,
"Recording for as long as the program runs").

    python bench/recorder_throughput.py [--seconds 20]

Runs the launch-bound loop of bench/recorder_memory.py (an 8-layer MLP on 4
rows, one thread) for SECONDS in each mode and prints one line per mode:
steps per second and operators per second.

  plain         the program alone
  ops           the operator recorder without fingerprints (a measured pass on
                a machine without a GPU, where operators are the measurement)
  fingerprints  the recording pass (every operator, every value fingerprinted)

The operators of one step are counted once, from a recorded step, so the plain
mode's operator rate is its step rate times that count. On a GPU the measured
pass records nothing per operator; its cost is the overhead in "Measured pass".
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time


def run(mode: str, seconds: float, model, x) -> dict:
    import magneton

    path = os.path.join(tempfile.mkdtemp(), f"{mode}.mgt")
    rec = None
    if mode != "plain":
        rec = magneton.record(path, ops=True, fingerprints=(mode == "fingerprints"))
        rec.__enter__()
    steps = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        model(x)
        steps += 1
    elapsed = time.monotonic() - t0
    ops = 0
    if rec:
        rec.__exit__(None, None, None)
        ops = int((rec.summary or {}).get("ops") or 0)
        os.remove(path)
    return {"mode": mode, "seconds": round(elapsed, 2), "steps": steps, "ops": ops,
            "steps_per_s": round(steps / elapsed, 1)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=20)
    a = p.parse_args()
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)])
    x = torch.randn(4, 64)
    with torch.no_grad():
        for _ in range(50):
            model(x)
        rows = [run(mode, a.seconds, model, x) for mode in ("plain", "ops", "fingerprints")]
    per_step = next(r["ops"] / r["steps"] for r in rows if r["ops"])
    for r in rows:
        r["ops_per_step"] = round(per_step, 1)
        r["ops_per_s"] = round(r["steps_per_s"] * per_step)
        print(json.dumps(r))
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
