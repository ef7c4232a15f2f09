"""Records the eager-against-compiled fixtures on the CPU with the real
recorders: the same small MLP (GELU written out as eight element-wise
operators, as GPT-2's gelu_new is) run one operator at a time and compiled.

    PYTHONPATH=python python tests/data/dispatch/make_fixtures.py [OUT_DIR] [--repeat N]
        [--layers 4] [--width 64] [--batch 8] [--device cpu|cuda] [--energy none|nvml|auto] [--sides torch,jax]

Writes, into OUT_DIR (default: this folder, compacted to 1 KiB pages for
committing):
  jax_eager.mgt, jax_jit.mgt          record_jax of the function and of jax.jit of it
                                      (one file each: values, and times from `repeat` executions)
  jax_eager_again.mgt                 the function recorded once more: the A/A pair with jax_eager
  torch_eager.mgt, torch_compiled.mgt magneton.record of the module and of torch.compile of it
                                      (recording pass: fingerprints, one iteration)
  torch_eager-measured.mgt, torch_compiled-measured.mgt
                                      measured passes (`repeat` iterations, no fingerprints)
torch.compile uses inductor (on the CPU a C++ compiler is needed). On the CPU
one intra-op thread, so that waking worker threads on a shared machine does not
add time at random operators. scripts/gpu/dispatch.sh runs it with --device
cuda --energy nvml and larger sizes.
"""

from __future__ import annotations

import argparse
import math
import os
import sqlite3
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def gelu_new(x, np_like):
    """GPT-2's tanh GELU as eight element-wise operations."""
    return 0.5 * x * (1.0 + np_like.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * np_like.pow(x, 3.0))))


def weights(layers: int, width: int, seed: int = 0):
    import torch
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(width, width, generator=g) / math.sqrt(width), torch.randn(width, generator=g) * 0.1)
            for _ in range(layers)]


def record_torch(out_dir: str, layers: int, width: int, batch: int, repeat: int, device: str, energy: str) -> list:
    import torch
    import magneton

    if device == "cpu":
        torch.set_num_threads(1)

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList()
            for w, b in weights(layers, width):
                lin = torch.nn.Linear(width, width)
                with torch.no_grad():
                    lin.weight.copy_(w)
                    lin.bias.copy_(b)
                self.layers.append(lin)

        def forward(self, x):
            for lin in self.layers:
                x = gelu_new(lin(x), torch)
            return x

    model = Mlp().eval().to(device)
    x = torch.randn(batch, width, generator=torch.Generator().manual_seed(1)).to(device)
    written = []
    for name, fn in (("torch_eager", model), ("torch_compiled", torch.compile(model))):
        with torch.no_grad():
            for _ in range(3):
                fn(x)  # warm-up: compiles, allocates
            path = os.path.join(out_dir, f"{name}.mgt")
            with magneton.record(path, fingerprints=True, overwrite=True):
                fn(x)
            measured = os.path.join(out_dir, f"{name}-measured.mgt")
            # On a GPU with energy measured: at least a second of iterations, so that the
            # energy rests on ~10 NVML counter updates (a compiled MLP step takes ~0.4 ms).
            until = time.monotonic() + (1.0 if device == "cuda" and energy != "none" else 0.0)
            with magneton.record(measured, energy=energy, overwrite=True) as rec:
                n = 0
                while n < repeat or time.monotonic() < until:
                    fn(x)
                    rec.step()
                    n += 1
                if device == "cuda":
                    torch.cuda.synchronize()
        written += [path, measured]
    return written


def record_jax_pair(out_dir: str, layers: int, width: int, batch: int, repeat: int, device: str,
                    energy: str) -> list:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from magneton.jax_recorder import record_jax

    target = jax.devices("gpu" if device == "cuda" else "cpu")[0]
    params = jax.device_put([(jnp.asarray(w.t().numpy()), jnp.asarray(b.numpy())) for w, b in weights(layers, width)],
                            target)
    x = jax.device_put(jnp.asarray(np.random.default_rng(1).standard_normal((batch, width), dtype=np.float32)), target)

    def mlp(params, x):
        for w, b in params:
            x = gelu_new(x @ w + b, jnp)
        return x

    written = []
    for name, fn in (("jax_eager", mlp), ("jax_jit", jax.jit(mlp)), ("jax_eager_again", mlp)):
        path = os.path.join(out_dir, f"{name}.mgt")
        record_jax(fn, params, x, path=path, repeat=repeat, energy=energy, overwrite=True)
        written.append(path)
    return written


def compact(path: str) -> None:
    """1 KiB pages, as the other committed fixtures (the writer's suit streaming)."""
    sqlite3.connect(path).executescript("PRAGMA page_size=1024; VACUUM;")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir", nargs="?", default=HERE)
    p.add_argument("--repeat", type=int, default=5,
                   help="executions (JAX) and measured iterations (torch; on a GPU with energy, "
                        "at least a second of them)")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--sides", default="torch,jax")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--energy", choices=("none", "nvml", "auto"), default="none")
    args = p.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    shape = (args.layers, args.width, args.batch, args.repeat, args.device, args.energy)
    written = []
    if "torch" in args.sides:
        written += record_torch(args.out_dir, *shape)
    if "jax" in args.sides:
        written += record_jax_pair(args.out_dir, *shape)
    for path in written:
        if os.path.abspath(args.out_dir) == HERE:
            compact(path)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
