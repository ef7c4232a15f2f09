"""The C++ side of the JAX recorder: fingerprints and the run writer.

Both come from the torch recorder's extension library (magneton._torch), so a
JAX array is fingerprinted by the same ATen code as a torch tensor (handed
over through DLPack, on its own device, without a copy) and written by the
same store writer, energy samplers and CUPTI correlation. The JAX writer is a
second module init (`_jax`) inside that library, loaded by name from it."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from typing import Optional

import numpy as np

from magneton import recorder

_native = None
_load_error: Optional[str] = None


def torch_extension():
    """magneton._torch, or None when it cannot be loaded (load_error() says
    why). Loading it imports torch first, in a JAX program too: the extension
    links libtorch (recorder.extension)."""
    global _load_error
    try:
        return recorder.extension()
    except ImportError as e:
        _load_error = str(e)
        return None


def load_error() -> str:
    """Why torch_extension() returned None."""
    return _load_error or "magneton._torch was not loaded"


def jax_writer():
    """The `_jax` module (Session), or None when the extension is not built."""
    global _native
    if _native is None:
        ext = torch_extension()
        if ext is None:
            return None
        path = ext.__file__
        loader = importlib.machinery.ExtensionFileLoader("magneton._jax", path)
        spec = importlib.util.spec_from_file_location("magneton._jax", path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        _native = module
    return _native


def as_torch(value):
    """A torch tensor viewing the same memory as a JAX array (DLPack), or a
    CPU tensor for NumPy values and Python scalars."""
    import jax
    import torch

    if isinstance(value, jax.Array):
        return torch.from_dlpack(value)
    return torch.from_numpy(np.array(value))


class Fingerprinter:
    """Calls the ATen fingerprint on JAX values; counts what it could not do."""

    def __init__(self, **options):
        self.ext = torch_extension()
        if self.ext is None:
            raise ImportError(f"fingerprints need the torch extension: {load_error()}")
        self.options = options
        self.failures = 0

    def __call__(self, value) -> Optional[dict]:
        try:
            return dict(self.ext.fingerprint(as_torch(value), **self.options))
        except Exception:  # complex, tokens, extended dtypes (PRNG keys)
            self.failures += 1
            return None
