"""torch-vs-jax, JAX side: the same stack as one jitted function of
lax.conv_general_dilated (NCHW/OIHW at the interface; XLA picks the layout inside and
fuses bias and ReLU into the convolution), default precision."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "jax"


def conv_stack(x, layers):
    import jax
    for w, b in layers:
        x = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        x = jax.nn.relu(x + b[None, :, None, None])
    return x


def setup(device, small):
    import jax
    import jax.numpy as jnp
    data = workload.arrays(small)
    layers = [(jnp.asarray(w), jnp.asarray(b)) for w, b in data["layers"]]
    return {"layers": layers, "x": jnp.asarray(data["x"]), "fn": jax.jit(conv_stack)}


def program(state):
    return state["fn"], (state["x"], state["layers"])


def step(state):
    fn, args = program(state)
    return fn(*args)


if __name__ == "__main__":
    casekit.main(__name__)
