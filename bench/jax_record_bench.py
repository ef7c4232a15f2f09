"""How record_jax's time grows with `repeat` (docs/benchmarks.md, "JAX recorder").

    PYTHONPATH=python python bench/jax_record_bench.py [--repeats 10,30,100,300,1000] [--device cpu|cuda]

An 8-layer MLP (width 128, batch 8, GELU as eight operations: 88 equations an
execution) recorded with fingerprints into a file, without and with jax.jit,
once per repeat count after a warm-up recording. Per row: the recording's wall
and process CPU time, the measured pass's own time (the program running,
`repeat` executions), and the rest (value pass, writing, kernel linking) per
execution: constant when recording grows in proportion to `repeat`.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

import magneton.jax_recorder as jr
from magneton.jax import timeline


def gelu_new(x):
    return 0.5 * x * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * jnp.power(x, 3.0))))


def mlp(params, x):
    for w, b in params:
        x = gelu_new(x @ w + b)
    return x


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", default="10,30,100,300,1000")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    a = p.parse_args(argv)
    measured = [0.0]
    inner = timeline.measured_pass

    @functools.wraps(inner)
    def timed(*args, **kw):
        t = time.perf_counter()
        out = inner(*args, **kw)
        measured[0] += time.perf_counter() - t
        return out

    jr.timeline.measured_pass = timed
    rng = np.random.default_rng(0)
    target = jax.devices("gpu" if a.device == "cuda" else "cpu")[0]
    params = jax.device_put([(jnp.asarray(rng.standard_normal((128, 128), dtype=np.float32) / math.sqrt(128)),
                              jnp.asarray(rng.standard_normal(128, dtype=np.float32) * 0.1)) for _ in range(8)],
                            target)
    x = jax.device_put(jnp.asarray(rng.standard_normal((8, 128), dtype=np.float32)), target)
    out = tempfile.mkdtemp(prefix="jax-record-bench.")
    print(f"{'fn':5} {'repeat':>6} {'ops':>7} {'wall s':>7} {'cpu s':>7} {'measured s':>10} {'rest/exec ms':>12}")
    for name, fn in (("eager", mlp), ("jit", jax.jit(mlp))):
        jr.record_jax(fn, params, x, path=os.path.join(out, "warm.mgt"), repeat=1, overwrite=True)
        for repeat in map(int, a.repeats.split(",")):
            measured[0] = 0.0
            w0, c0 = time.perf_counter(), time.process_time()
            rec = jr.record_jax(fn, params, x, path=os.path.join(out, f"{name}.mgt"), repeat=repeat, overwrite=True)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            # The warm-up execution is in `measured` too: one more than repeat.
            rest = (wall - measured[0]) / repeat * 1e3
            print(f"{name:5} {repeat:6d} {rec.summary['ops']:7d} {wall:7.2f} {cpu:7.2f} {measured[0]:10.2f} {rest:12.3f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
