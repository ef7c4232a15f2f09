"""Records the committed cross-framework fixtures: each model of models.py in
PyTorch (magneton.record, fingerprints on) and in JAX (record_jax, jitted),
on the CPU, with the same weights and inputs.

    PYTHONPATH=python python tests/data/jax/make_fixtures.py [OUT_DIR] [--size small|large]
        [--energy none|nvml|auto] [--repeat N] [--models mlp,conv,attention]

Writes <model>_torch.mgt and <model>_jax.mgt into OUT_DIR (default: this
folder). The GPU script (scripts/gpu/jax.sh) runs it with --device cuda.
"""

from __future__ import annotations

import argparse
import os
import sys

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


def record_pair(name, out_dir, size="small", energy="none", repeat=1, device="cpu") -> tuple:
    torch_fn, torch_args, jax_fn, jax_args = models.pair(name, size=size)
    torch_args = to_device(torch_args, device)
    target = jax.devices("gpu")[0] if device != "cpu" else jax.devices("cpu")[0]
    jax_args = jax.device_put(jax_args, target)
    a = os.path.join(out_dir, f"{name}_torch.mgt")
    b = os.path.join(out_dir, f"{name}_jax.mgt")
    with torch.no_grad():
        torch_fn(*torch_args)  # warm-up, as the JAX recorder does
        with magneton.record(a, fingerprints=True, energy=energy, overwrite=True):
            for _ in range(repeat):
                torch_fn(*torch_args)
            if device != "cpu":
                torch.cuda.synchronize()
    record_jax(jax_fn, *jax_args, path=b, energy=energy, repeat=repeat, overwrite=True)
    return a, b


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir", nargs="?", default=HERE)
    p.add_argument("--size", choices=("small", "large"), default="small")
    p.add_argument("--energy", default="none")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--models", default=",".join(models.MODELS))
    args = p.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.models.split(","):
        a, b = record_pair(name, args.out_dir, args.size, args.energy, args.repeat, args.device)
        print(f"{name}: {a} {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
