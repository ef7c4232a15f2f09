"""Records the run pairs bench/diff_bench.cpp diffs (docs/benchmarks.md, "Diff"),
with the real recorders, about `--ops` operators per run:

  jax_mlp_{eager,jit}.mgt      an 8-layer MLP (GELU as eight operations) under
                               record_jax without and with jax.jit, `repeat`
                               executions: every value recorded `repeat` times over
  torch_gpt2_{gelu_new,gelu_fused}{,-measured}.mgt
                               transformers' GPT-2 (random weights) with HF's
                               eight-operator GELU against the fused one: a
                               recording pass with fingerprints over N forwards,
                               each on other token ids (no value repeats), and a
                               measured pass of the same N forwards, twice

    PYTHONPATH=python python bench/record_diff_pairs.py OUT_DIR [--ops 100000] [--device cpu|cuda]
        [--pairs jax_mlp,torch_gpt2] [--energy none|nvml|auto]

Prints each file's operators and kernels and the seconds each recording took.
On a GPU (--device cuda) the runs have kernels; scripts/gpu/dispatch.sh records
them there.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import magneton


def gelu_new(x, np_like):
    return 0.5 * x * (1.0 + np_like.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * np_like.pow(x, 3.0))))


def summary(path: str) -> str:
    run = magneton.load_run(path)
    return f"{len(run['ops'])} ops, {len(run['kernels'])} kernels"


def jax_mlp(out: str, ops: int, device: str, energy: str) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from magneton.jax_recorder import record_jax

    rng = np.random.default_rng(0)
    width, layers = 128, 8
    target = jax.devices("gpu" if device == "cuda" else "cpu")[0]
    params = jax.device_put([(jnp.asarray(rng.standard_normal((width, width), dtype=np.float32) / math.sqrt(width)),
                              jnp.asarray(rng.standard_normal(width, dtype=np.float32) * 0.1))
                             for _ in range(layers)], target)
    x = jax.device_put(jnp.asarray(rng.standard_normal((8, width), dtype=np.float32)), target)

    def mlp(params, x):
        for w, b in params:
            x = gelu_new(x @ w + b, jnp)
        return x

    per_execution = len(jax.make_jaxpr(mlp)(params, x).jaxpr.eqns)
    repeat = max(1, -(-ops // per_execution))  # at least `ops` operators
    for name, fn in (("eager", mlp), ("jit", jax.jit(mlp))):
        path = os.path.join(out, f"jax_mlp_{name}.mgt")
        t0 = time.perf_counter()
        record_jax(fn, params, x, path=path, repeat=repeat, energy=energy, overwrite=True)
        print(f"{path}: {summary(path)}; repeat {repeat}; record_jax {time.perf_counter() - t0:.1f} s", flush=True)


def torch_gpt2(out: str, ops: int, device: str, energy: str) -> None:
    import torch
    import transformers

    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    cfg = dict(n_layer=12, n_embd=64, n_head=4, vocab_size=512, n_positions=64, attn_implementation="eager")
    ids = torch.randint(0, 512, (1, 16), generator=torch.Generator().manual_seed(1)).to(device)
    forwards = 0  # set by the first variant (the larger one), the same for both
    for variant, act in (("gelu_new", "gelu_new"), ("gelu_fused", "gelu_pytorch_tanh")):
        torch.manual_seed(0)
        model = transformers.GPT2Model(transformers.GPT2Config(activation_function=act, **cfg)).eval().to(device)
        with torch.no_grad():
            model(ids)  # warm-up
            path = os.path.join(out, f"torch_gpt2_{variant}.mgt")
            if not forwards:
                # One forward: its operators (recorded: a GPU's measured pass would record kernels only).
                with magneton.record(path, overwrite=True, ops=True) as rec:
                    model(ids)
                forwards = max(1, -(-ops // rec.summary["ops"]))
            t0 = time.perf_counter()
            # Each forward on other token ids: no value repeats between them.
            inputs = [torch.randint(0, 512, (1, 16), generator=torch.Generator().manual_seed(100 + i)).to(device)
                      for i in range(forwards)]
            # On a GPU each fingerprint's spectrum is an eigensolver call that synchronizes (~1 ms even
            # for these small tensors): without spectra the ~100k-operator recording pass takes about a
            # minute, not several (docs/fingerprints.md; matching needs no spectra to pair these runs).
            spectra = {"spectra_max_numel": 0} if device == "cuda" else {}
            with magneton.record(path, fingerprints=True, overwrite=True, fingerprint_options=spectra):
                for x in inputs:
                    model(x)
            t1 = time.perf_counter()
            measured = os.path.join(out, f"torch_gpt2_{variant}-measured.mgt")
            with magneton.record(measured, energy=energy, overwrite=True):
                for _ in range(2):  # the step (all the forwards) twice, as a measured pass repeats it
                    for x in inputs:
                        model(x)
                if device == "cuda":
                    torch.cuda.synchronize()
            print(f"{path}: {summary(path)}; {forwards} forwards; recording pass {t1 - t0:.1f} s", flush=True)
            print(f"{measured}: {summary(measured)}; measured pass {time.perf_counter() - t1:.1f} s", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--ops", type=int, default=100_000, help="operators per run, about")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--energy", choices=("none", "nvml", "auto"), default="none")
    p.add_argument("--pairs", default="jax_mlp,torch_gpt2")
    args = p.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    for pair in args.pairs.split(","):
        {"jax_mlp": jax_mlp, "torch_gpt2": torch_gpt2}[pair](args.out_dir, args.ops, args.device, args.energy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
