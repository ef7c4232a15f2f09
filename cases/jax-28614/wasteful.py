"""jax-28614, wasteful side: jax.scipy.signal.stft written for one signal and mapped
over the batch with jax.vmap, as in the issue (the library's general STFT: boundary
padding, segment extraction for arbitrary overlap, detrend/scaling machinery)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "jax"


def setup(device, small):
    import jax
    import jax.numpy as jnp
    state = workload.setup(device, small)
    nperseg, window = state["nperseg"], state["window"]

    def one(signal):
        _, _, z = jax.scipy.signal.stft(signal, window=window, nperseg=nperseg,
                                        noverlap=nperseg - state["hop"])
        return jnp.abs(z)

    state["fn"] = jax.jit(jax.vmap(one))
    return state


def program(state):
    return state["fn"], (state["x"],)


def step(state):
    fn, args = program(state)
    return fn(*args)


if __name__ == "__main__":
    casekit.main(__name__)
