"""One conv2d stack computed by two frameworks: four 3x3 convolutions ('same' padding,
bias, ReLU), 32 -> 64 -> 64 -> 128 -> 128 channels, on 16 images of 128x128, fp32, NCHW
at the interface. Weights and input are drawn once with NumPy, so PyTorch and JAX
compute on identical numbers."""
import numpy as np

import casekit  # on sys.path: the variant put cases/ there


def arrays(small: bool) -> dict:
    casekit.seed(0)
    chans, batch, hw = ([4, 8, 8, 16, 16], 2, 16) if small else ([32, 64, 64, 128, 128], 16, 128)
    layers = []
    for cin, cout in zip(chans, chans[1:]):
        scale = np.sqrt(2.0 / (cin * 9))  # He init keeps activations O(1) through the stack
        layers.append(((np.random.randn(cout, cin, 3, 3) * scale).astype(np.float32),
                       (np.random.randn(cout) * 0.1).astype(np.float32)))
    x = np.random.randn(batch, chans[0], hw, hw).astype(np.float32)
    return {"layers": layers, "x": x}
