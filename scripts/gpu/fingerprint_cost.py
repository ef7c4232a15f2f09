"""What one fingerprint costs on the device, by tensor shape, and where.

    python fingerprint_cost.py [--reps 10]

For shapes a GPT-2 small training step fingerprints (weights, activations,
attention scores), the time of magneton's fingerprint with its default
options, without spectra (spectra_max_numel=0), and of parts alone (the
sort; the float64 Gram's eigvalsh, which spectra took before they became
Schatten norms from matrix products): medians of REPS, ms.
Prints a table; GPU_DRY=1 runs it on the CPU with the same shapes scaled down.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import magneton  # noqa: E402

DRY = os.environ.get("GPU_DRY") == "1"
DEV = "cpu" if DRY else "cuda"
SHAPES = [(768, 768), (2304, 768), (768, 3072), (8, 512, 768), (8, 512, 3072), (8, 12, 512, 64), (8, 12, 512, 512),
          (50257, 768), (768,)]


def ms(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        if DEV == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if DEV == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    reps = ap.parse_args().reps
    print(f"{'shape':>20} {'default':>9} {'no spectra':>11} {'eigvalsh(side)':>15} {'sort':>7}  (ms, median of {reps})")
    for shape in SHAPES:
        if DRY:
            shape = tuple(max(1, s // 8) for s in shape)
        t = torch.randn(shape, device=DEV, dtype=torch.float16 if DEV == "cuda" else torch.float32)
        full = ms(lambda: magneton.fingerprint(t), reps)
        bare = ms(lambda: magneton.fingerprint(t, spectra_max_numel=0), reps)
        dims = [d for d in shape if d != 1]
        side = max((min(d, t.numel() // d) for d in dims), default=0) if len(dims) >= 2 else 0
        eig = "-"
        if side:
            g = torch.randn(side, side, device=DEV, dtype=torch.float64)
            g = g @ g.T
            eig = f"{ms(lambda: torch.linalg.eigvalsh(g), reps):.2f}({side})"
        x = t.double().reshape(-1)
        srt = ms(lambda: x.sort(), reps)
        print(f"{str(shape):>20} {full:9.2f} {bare:11.2f} {eig:>15} {srt:7.2f}", flush=True)


if __name__ == "__main__":
    main()
