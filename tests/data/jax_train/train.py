"""A JAX training script as users write it (set-up, a loop of steps, a
summary): a bag-of-tokens classifier whose embedding is a lookup (take) or,
with --embed onehot, a one-hot matrix product, the form TPU-minded code
uses, which on other devices computes the same rows at V times the work."""
import argparse
import time
from functools import partial

import jax
import jax.numpy as jnp

p = argparse.ArgumentParser()
p.add_argument("--iters", type=int, default=12)
p.add_argument("--embed", choices=("take", "onehot"), default="take")
p.add_argument("--vocab", type=int, default=2048)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--time", action="store_true", help="also print the time per step after the first two")
a = p.parse_args()
V, D, B, T = a.vocab, 32, a.batch, 32


@jax.jit
def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {"emb": jax.random.normal(k1, (V, D)) * 0.1, "w": jax.random.normal(k2, (D, D)) * 0.1,
            "out": jax.random.normal(k3, (D, 8)) * 0.1}


def embed(emb, ids):
    if a.embed == "onehot":
        return jax.nn.one_hot(ids, V) @ emb                   # the embedding
    return jnp.take(emb, ids, axis=0)


def loss(params, ids, labels):
    h = jax.nn.relu(embed(params["emb"], ids) @ params["w"]).mean(axis=1)
    logp = jax.nn.log_softmax(h @ params["out"])
    return -jnp.take_along_axis(logp, labels[:, None], axis=1).mean()


@partial(jax.jit, donate_argnums=0)
def train_step(params, ids, labels):
    value, grads = jax.value_and_grad(loss)(params, ids, labels)
    return jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, params, grads), value


params = init(jax.random.PRNGKey(0))
keys = jax.random.split(jax.random.PRNGKey(1), 4)
batches = [(jax.random.randint(k, (B, T), 0, V), jax.random.randint(k, (B,), 0, 8)) for k in keys]
for i in range(a.iters):                                       # the step loop
    params, value = train_step(params, *batches[i % 4])
    if i == 1:
        jax.block_until_ready(value)
        t0 = time.perf_counter()
print(f"summary: loss {float(value):.6f}")
if a.time:
    print(f"{(time.perf_counter() - t0) / (a.iters - 2) * 1e3:.4f} ms a step")
