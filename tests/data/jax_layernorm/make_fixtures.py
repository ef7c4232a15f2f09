"""Records the JAX layer-norm fixtures on the CPU with the real recorder: a
jitted 4-layer tanh MLP whose layer norm is written out (manual.mgt: the
variance as the mean of squared deviations) or takes jnp.var and lax.rsqrt
(library.mgt), each followed by the program's own calls (record_jax's
`measured`). Inside the jit call XLA fuses either form into the same work,
while the equations run one by one differ (jnp.var adds a few), so the
op-level shares of the call differ and the program's own calls do not.

    PYTHONPATH=python python tests/data/jax_layernorm/make_fixtures.py [OUT_DIR] [--calls 200]

Writes manual.mgt and library.mgt into OUT_DIR (default: this folder), each
side in its own process (the first program a process runs is timed slower),
compacted to 1 KiB pages for committing.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "jax"))


def record(path: str, library: bool, calls: int) -> None:
    import jax
    import jax.numpy as jnp
    from magneton.jax_recorder import record_jax

    def norm(x):
        mu = x.mean(-1, keepdims=True)
        if library:
            return (x - mu) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)
        return (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)

    @jax.jit
    def model(params, x):
        for w in params:
            x = norm(jnp.tanh(x @ w))
        return x.sum()

    key = jax.random.PRNGKey(0)
    params = [jax.random.normal(jax.random.fold_in(key, i), (256, 256)) / 16 for i in range(4)]
    x = jax.random.normal(key, (64, 256))
    record_jax(model, params, x, path=path, overwrite=True, measured=calls)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?", default=HERE)
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--side", choices=["manual", "library"], help=argparse.SUPPRESS)  # one side, in its own process
    a = p.parse_args(argv)
    if a.side:
        record(os.path.join(a.out, a.side + ".mgt"), a.side == "library", a.calls)
        return 0
    from make_fixtures import record_each_side

    record_each_side(__file__, a.out, ("manual", "library"), ["--calls", str(a.calls)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
