"""Records the cross-framework fixtures: each model of models.py in PyTorch
(magneton.record) and in JAX (record_jax on the jitted model), with the same
weights and inputs.

    PYTHONPATH=python python tests/data/jax/make_fixtures.py [OUT_DIR]
        [--size small|large] [--device cpu|cuda] [--energy none|nvml|auto] [--repeat N]
        [--models mlp,conv,attention] [--sides torch,jax] [--torch-measured] [--time]

Writes <model>_torch.mgt (recording pass: fingerprints on) and <model>_jax.mgt
(one file: values from the jaxpr walk, times, kernels and energy from the
measured pass) into OUT_DIR (default: this folder, compacted to small pages
for committing). --torch-measured also writes <model>_torch_measured.mgt, a
torch pass without fingerprints whose time and energy are not slowed by them.
scripts/gpu/jax.sh runs it with --device cuda --size large --energy nvml, one
side per process so each has the CUPTI tracer to itself.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import jax  # noqa: E402
import torch  # noqa: E402

import magneton  # noqa: E402
import models  # noqa: E402
from magneton.jax_recorder import record_jax  # noqa: E402


def to_device(tree, device):
    if isinstance(tree, torch.Tensor):
        return tree.to(device)
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_device(t, device) for t in tree)
    if isinstance(tree, dict):
        return {k: to_device(v, device) for k, v in tree.items()}
    return tree


def record_torch(fn, args, path, energy, repeat, fingerprints, device):
    with torch.no_grad():
        fn(*args)  # warm-up (allocator, cuBLAS handles), as the JAX recorder compiles first
        if device != "cpu":
            torch.cuda.synchronize()
        with magneton.record(path, fingerprints=fingerprints, energy=energy, overwrite=True):
            for _ in range(repeat):
                fn(*args)
            if device != "cpu":
                torch.cuda.synchronize()


def record_each_side(script, out, sides, args):
    """Runs `script OUT ARGS --side S` for each side S in a process of its own (a
    process-wide flag, or the first program a process runs being timed slower),
    then compacts OUT/S.mgt."""
    for side in sides:
        subprocess.run([sys.executable, script, out, *args, "--side", side], check=True)
        compact(os.path.join(out, side + ".mgt"))
        print(f"wrote {os.path.join(out, side + '.mgt')}")


def compact(path):
    """Rewrites a run file with 1 KiB pages (the writer's 64 KiB pages suit
    streaming, not a repository): same rows, same schema, a few dozen KiB."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size=1024")
    db.execute("VACUUM")
    db.close()


def record_model(name, out_dir, size, device, energy, repeat, sides, torch_measured, timed) -> list:
    torch_fn, torch_args, jax_fn, jax_args = models.pair(name, size=size)
    written = []
    if "torch" in sides:
        torch_args = to_device(torch_args, device)
        path = os.path.join(out_dir, f"{name}_torch.mgt")
        record_torch(torch_fn, torch_args, path, energy, repeat, True, device)
        written.append(path)
        if torch_measured:
            path = os.path.join(out_dir, f"{name}_torch_measured.mgt")
            record_torch(torch_fn, torch_args, path, energy, repeat, False, device)
            written.append(path)
    if "jax" in sides:
        target = jax.devices("gpu" if device == "cuda" else "cpu")[0]
        path = os.path.join(out_dir, f"{name}_jax.mgt")
        jax_args = jax.device_put(jax_args, target)
        t0 = time.perf_counter()
        rec = record_jax(jax_fn, *jax_args, path=path, energy=energy, repeat=repeat, overwrite=True)
        t1 = time.perf_counter()
        note = ""
        if timed:  # once more, now that every primitive is compiled
            record_jax(jax_fn, *jax_args, path=path, energy=energy, repeat=repeat, overwrite=True)
            note = f" (again: {1e3 * (time.perf_counter() - t1):.0f} ms)"
        print(f"{name} jax: {rec.summary}; record_jax {1e3 * (t1 - t0):.0f} ms{note}")
        written.append(path)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir", nargs="?", default=HERE)
    p.add_argument("--size", choices=("small", "large"), default="small")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--energy", choices=("none", "nvml", "rapl", "auto"), default="none")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--models", default=",".join(models.MODELS))
    p.add_argument("--sides", default="torch,jax")
    p.add_argument("--torch-measured", action="store_true")
    p.add_argument("--time", action="store_true", help="print record_jax's time, recording twice")
    args = p.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    sides = set(args.sides.split(","))
    for name in args.models.split(","):
        for path in record_model(name, args.out_dir, args.size, args.device, args.energy, args.repeat,
                                 sides, args.torch_measured, args.time):
            if os.path.abspath(args.out_dir) == HERE:
                compact(path)
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
