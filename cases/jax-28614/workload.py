"""A batch of short-time Fourier transforms in JAX, as in the issue's benchmark:
256 signals of 100000 samples, a 2048-point Hann window, 50% overlap, fp32; the result
is the magnitude spectrogram (batch, 1025 frequencies, 99 frames). Both sides read the
same signals (drawn with NumPy) and return the same values as jax.scipy.signal.stft."""
import numpy as np

import casekit  # on sys.path: the variant put cases/ there


def setup(device: str, small: bool) -> dict:
    import jax.numpy as jnp
    casekit.seed(0)
    batch, samples, nperseg = (2, 4096, 256) if small else (256, 100000, 2048)
    signals = np.random.uniform(size=(batch, samples)).astype(np.float32)
    return {"x": jnp.asarray(signals), "window": jnp.hanning(nperseg).astype(jnp.float32),
            "nperseg": nperseg, "hop": nperseg // 2}
