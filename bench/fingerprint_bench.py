"""Cost of one fingerprint on the CPU by tensor size (docs/benchmarks.md).

    PYTHONPATH=python python bench/fingerprint_bench.py [--sizes 1e5,1e6,1e7,3.8e7] [--repeat 3]

Each size: a 1-D float32 tensor of normal values (no spectra: the quantiles'
order statistics, moments and norms alone) and, beside it, a float64 sort
of the same values, which is what the quantiles cost when they came from a
full sort. Median of --repeat; one intra-op thread."""

import argparse
import statistics
import time

import torch

import magneton


def median_seconds(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="1e5,1e6,1e7,3.8e7")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print("| elements | fingerprint (s) | float64 sort alone (s) |")
    print("|---|---|---|")
    for n in (int(float(s)) for s in a.sizes.split(",")):
        x = torch.randn(n)
        fp = median_seconds(lambda: magneton.fingerprint(x), a.repeat)
        sort = median_seconds(lambda: torch.sort(x.double()), a.repeat)
        print(f"| {n:,} | {fp:.3f} | {sort:.3f} |")


if __name__ == "__main__":
    main()
