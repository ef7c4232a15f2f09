"""`magneton.record(...)`: records the PyTorch operators a block of code runs
into a run file (.mgt), the way torch.profiler is used (docs/recording.md).

    with magneton.record("run.mgt", fingerprints=True):   # recording pass: values
        model(x)
    with magneton.record("run-measured.mgt", energy="nvml"):  # measured pass
        model(x)

Every ATen operator call (forward and autograd backward) becomes an op with
its tensors in and out, so the file holds the dataflow graph; with
fingerprints=True each tensor value also gets a layout-invariant fingerprint
(slower: keep it off for the pass whose time and energy you measure)."""

from __future__ import annotations

import sys
from typing import Optional

from magneton import config_snapshot

__all__ = ["record", "fingerprint", "load_run", "extension"]

ENERGY_CHOICES = ("none", "nvml", "rapl", "auto")


def extension():
    """The C++ extension magneton._torch; ImportError says how to build it."""
    import torch  # noqa: F401 - loads libtorch before the extension needs it

    try:
        from magneton import _torch
    except ImportError as e:
        raise ImportError(
            "magneton._torch is not built: cmake -S . -B build -DPython_EXECUTABLE=$(which python) "
            f"&& ninja -C build magneton_torch ({e})") from e
    return _torch


def _devices(torch) -> list:
    """The CUDA devices this process sees, named as NVML names them."""
    out = []
    if not torch.cuda.is_available():
        return out
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        uuid = str(getattr(p, "uuid", "") or "")
        if uuid and not uuid.startswith("GPU-"):
            uuid = "GPU-" + uuid
        out.append({"kind": "gpu", "ordinal": i, "name": p.name, "uuid": uuid,
                    "memory_bytes": int(p.total_memory)})
    return out


class record:  # noqa: N801 - used like a function, as torch.profiler.profile
    """Context manager that records the torch ops run inside it into `path`.

    path: the run file to create; an existing file is an error unless overwrite=True.
    energy: "none", "nvml" (GPU power and energy), "rapl" (CPU packages) or
        "auto" (every sensor the machine offers).
    fingerprints: fingerprint every tensor value (the recording pass).
    stacks: Python call site (file:line:function) of each top-level op.
    kernels: link CUDA kernels to ops through CUPTI when this build has it.
    fingerprint_options: quantiles, singular_values, spectra_max_numel, spectra_max_side.
    After the block, `.summary` holds counts (ops, tensors, graph_inputs, ...).
    """

    def __init__(self, path: str, energy: str = "none", fingerprints: bool = False, stacks: bool = True,
                 kernels: bool = True, overwrite: bool = False, command: Optional[str] = None,
                 fingerprint_options: Optional[dict] = None):
        if energy not in ENERGY_CHOICES:
            raise ValueError(f"energy={energy!r}: expected one of {', '.join(ENERGY_CHOICES)}")
        self.path = str(path)
        self.energy = energy
        self.fingerprints = bool(fingerprints)
        self.stacks = bool(stacks)
        self.kernels = bool(kernels)
        self.overwrite = bool(overwrite)
        self.command = command if command is not None else " ".join(sys.argv)
        self.fingerprint_options = dict(fingerprint_options or {})
        self.summary: Optional[dict] = None
        self.config: dict = {}
        self._native = None

    def __enter__(self):
        import torch

        ext = extension()
        self.config = config_snapshot.snapshot()
        self._native = ext.Recorder(
            self.path, overwrite=self.overwrite, fingerprints=self.fingerprints, stacks=self.stacks,
            kernels=self.kernels, energy=self.energy, command=self.command, devices=_devices(torch),
            **self.fingerprint_options)
        for key, value in self.config.items():
            self._native.set_config(key, value)
        self._native.set_info("framework", "torch")
        self._native.set_info("torch_version", torch.__version__)
        self._native.set_info("fingerprints", "true" if self.fingerprints else "false")
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._native is None:
            return False
        if self.kernels:
            self._synchronize()
        native, self._native = self._native, None
        self.summary = native.stop()
        return False  # the block's exception, if any, goes on

    @staticmethod
    def _synchronize():
        """Waits for queued GPU work so its kernels fall inside the recording."""
        torch = sys.modules.get("torch")
        try:
            if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - a broken CUDA context is the workload's business
            pass


def fingerprint(tensor, **options) -> dict:
    """The layout-invariant fingerprint of a tensor (docs/fingerprints.md)."""
    return dict(extension().fingerprint(tensor, **options))


def load_run(path: str) -> dict:
    """A run file as plain dicts and lists (ops, tensors, kernels, config, ...)."""
    return dict(extension().load_run(str(path)))
