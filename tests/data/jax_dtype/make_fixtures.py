"""Records the JAX dtype fixtures on the CPU with the real recorder: one
jitted kernel-regression prediction (RBF kernel between query and training
points, then a weighted sum) recorded with jax_enable_x64 on and off, each in
its own process (x64 is process-wide and set before any array exists).

    PYTHONPATH=python python tests/data/jax_dtype/make_fixtures.py [OUT_DIR] [--repeat 5]

Writes x64.mgt and x32.mgt into OUT_DIR (default: this folder), compacted to
1 KiB pages for committing. The inputs are made without an explicit dtype, as
a program relying on JAX's default does, so the flag alone decides it.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "jax"))


def record(path: str, x64: bool, repeat: int) -> None:
    import jax

    jax.config.update("jax_enable_x64", x64)
    import jax.numpy as jnp
    import numpy as np
    from magneton.jax_recorder import record_jax

    rng = np.random.default_rng(0)
    train = jnp.asarray(rng.standard_normal((1024, 256)).tolist())  # from Python floats: JAX's default dtype
    query = jnp.asarray(rng.standard_normal((512, 256)).tolist())
    alpha = jnp.asarray(rng.standard_normal((1024, 256)).tolist())

    @jax.jit
    def predict(query, train, alpha):
        d2 = jnp.sum(query**2, axis=1)[:, None] + jnp.sum(train**2, axis=1)[None, :] - 2 * query @ train.T
        return jnp.exp(-0.5 * d2 / query.shape[1]) @ alpha

    jax.block_until_ready(predict(query, train, alpha))
    record_jax(predict, query, train, alpha, path=path, overwrite=True, repeat=repeat)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?", default=HERE)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--side", choices=["x64", "x32"], help=argparse.SUPPRESS)  # one side, in its own process
    a = p.parse_args(argv)
    if a.side:
        record(os.path.join(a.out, a.side + ".mgt"), a.side == "x64", a.repeat)
        return 0
    from make_fixtures import record_each_side

    record_each_side(__file__, a.out, ("x64", "x32"), ["--repeat", str(a.repeat)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
