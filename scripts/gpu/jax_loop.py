# A small JAX jit loop: an MLP forward and its gradient, 20 steps.
import os, time
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax, jax.numpy as jnp

def loss(w, x):
    h = jax.nn.gelu(x @ w[0])
    return jnp.mean((h @ w[1]) ** 2)

step = jax.jit(jax.value_and_grad(loss))
k = jax.random.split(jax.random.PRNGKey(0), 3)
w = [jax.random.normal(k[0], (1024, 4096)), jax.random.normal(k[1], (4096, 1024))]
x = jax.random.normal(k[2], (256, 1024))
step(w, x)[0].block_until_ready()
t = time.perf_counter()
for _ in range(20):
    v, g = step(w, x)
    w = [wi - 1e-4 * gi for wi, gi in zip(w, g)]
jax.block_until_ready(w)
print(f"LOOP_S {time.perf_counter() - t:.6f} devices {jax.devices()}")
