"""jax-28614, efficient side: the same spectrogram written for the batch directly:
pad as scipy's boundary='zeros' does, cut the frames with reshapes (the hop divides
the window, so frames are adjacent chunks laid side by side), window them and call
jnp.fft.rfft once over the last axis; scaling='spectrum' divides by the window's sum."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "jax"


def spectrogram(x, window, nperseg, hop):
    import jax.numpy as jnp
    half = nperseg // 2
    x = jnp.pad(x, ((0, 0), (half, half)))  # boundary='zeros'
    n = x.shape[-1]
    nseg = -(-max(n - nperseg, 0) // hop) + 1  # padded=True: enough frames to cover the signal
    x = jnp.pad(x, ((0, 0), (0, (nseg - 1) * hop + nperseg - n)))
    chunks = x.reshape(x.shape[0], -1, hop)  # (batch, n / hop, hop)
    per = nperseg // hop
    frames = jnp.concatenate([chunks[:, i:i + nseg] for i in range(per)], axis=-1)
    spectrum = jnp.fft.rfft(frames * window, axis=-1) / window.sum()
    return jnp.abs(spectrum).transpose(0, 2, 1)  # (batch, freqs, frames), as stft returns


def setup(device, small):
    import functools

    import jax
    state = workload.setup(device, small)
    state["fn"] = jax.jit(functools.partial(spectrogram, nperseg=state["nperseg"], hop=state["hop"]))
    return state


def program(state):
    return state["fn"], (state["x"], state["window"])


def step(state):
    fn, args = program(state)
    return fn(*args)


if __name__ == "__main__":
    casekit.main(__name__)
