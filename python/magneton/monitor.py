"""Named energy measurement windows, nestable, like Zeus's begin_window/end_window.

    from magneton import Monitor
    with Monitor() as m:
        m.begin_window("epoch")
        ...
        step = m.end_window("epoch")
        print(step.time_s, step.energy_j, step.source)

    with Monitor() as m, m.window("forward") as w:
        model(x)
    print(w.measurement.total_j)

Samplers (NVML, RAPL, a power meter, procfs) run on C++ threads for the
Monitor's life; a window's energy is read from their readings (docs/energy.md).
Where nothing measures energy (no NVIDIA driver, no RAPL, or the C++ module
magneton._energy is not built) windows still time the code: energy_j is None
and `reason` says why. CPU energy from CPU time is an estimate, reported apart
in `estimates_j` and never added to measured joules."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Dict, Iterator, List, Optional

__all__ = ["Monitor", "Measurement", "clock_ns"]

try:
    from magneton import _energy
    _IMPORT_ERROR: Optional[str] = None
except ImportError as e:  # the CLI and recorder stay usable without it
    _energy = None
    _IMPORT_ERROR = (f"magneton._energy is not built ({e}); build it with "
                     "cmake -S . -B build -DPython_EXECUTABLE=$(which python) && ninja -C build magneton_energy_py")


def clock_ns() -> int:
    """The trace clock: CLOCK_MONOTONIC in ns, the clock of every Magneton timestamp."""
    return _energy.clock_ns() if _energy is not None else time.monotonic_ns()


@dataclasses.dataclass
class Measurement:
    """One closed window."""
    name: str
    time_s: float
    energy_j: Optional[Dict[str, float]]  # measured joules per device label ("gpu0"); None when unavailable
    source: Dict[str, str] = dataclasses.field(default_factory=dict)     # label -> "nvml: energy.total+power.instant"
    peak_w: Dict[str, float] = dataclasses.field(default_factory=dict)
    estimates_j: Dict[str, float] = dataclasses.field(default_factory=dict)  # CPU-time estimates, not measured
    total_j: Optional[float] = None  # GPUs and CPU packages (a meter or psys already includes them)
    reason: Optional[str] = None     # why energy_j is None
    start_ns: int = 0
    end_ns: int = 0

    @classmethod
    def _from_native(cls, d: dict) -> "Measurement":
        measured = [e for e in d["devices"] if not e["estimate"]]
        return cls(
            name=d["name"], time_s=d["time_s"],
            energy_j={e["label"]: e["joules"] for e in measured} if d["available"] else None,
            source={e["label"]: f'{e["source"]}: {e["method"]}' for e in d["devices"]},
            peak_w={e["label"]: e["peak_w"] for e in measured if e["peak_w"] > 0},
            estimates_j={e["label"]: e["joules"] for e in d["devices"] if e["estimate"]},
            total_j=d["total_j"], reason=d["reason"], start_ns=d["start_ns"], end_ns=d["end_ns"])


class _Window:
    """What `Monitor.window(name)` yields; `measurement` is set when the block ends."""

    def __init__(self, name: str):
        self.name = name
        self.measurement: Optional[Measurement] = None


class Monitor:
    """Runs the energy samplers; begin_window/end_window measure named spans.

    gpus: CUDA ordinals to measure (None: all visible). meter: path of a CSV
    stream 't_ns,watts[,channel]'. cpu_watts_per_core: the figure behind the
    CPU estimate. settle=True on end_window waits (<= 0.3 s) for the energy
    counter's next update so the window's end is not extrapolated."""

    def __init__(self, gpus: Optional[List[int]] = None, nvml: bool = True, rapl: bool = True,
                 procfs: bool = True, meter: Optional[str] = None, poll_interval_ms: float = 2.0,
                 energy_poll_interval_ms: float = 15.0, cpu_watts_per_core: float = 5.0):
        self._native = None
        self._open: Dict[str, int] = {}  # fallback bookkeeping when _energy is missing
        if _energy is not None:
            self._native = _energy.Monitor(
                nvml=nvml, rapl=rapl, procfs=procfs, gpus=list(gpus or []), meter=meter or "",
                poll_interval_us=int(poll_interval_ms * 1000),
                energy_poll_interval_us=int(energy_poll_interval_ms * 1000),
                cpu_watts_per_core=cpu_watts_per_core)

    @property
    def available(self) -> bool:
        """True when some device's energy is measured (not only estimated)."""
        return self._native is not None and self._native.available

    @property
    def reason(self) -> Optional[str]:
        """Why energy is unavailable, or None when it is available."""
        if self._native is None:
            return _IMPORT_ERROR
        return None if self._native.available else self._native.reason

    def begin_window(self, name: str) -> None:
        if self._native is not None:
            self._native.begin_window(name)
            return
        if name in self._open:
            raise ValueError(f"window '{name}' is already open")
        self._open[name] = time.monotonic_ns()

    def end_window(self, name: str, settle: bool = False) -> Measurement:
        if self._native is not None:
            return Measurement._from_native(self._native.end_window(name, settle))
        end = time.monotonic_ns()
        if name not in self._open:
            raise ValueError(f"no open window named '{name}'")
        start = self._open.pop(name)
        return Measurement(name=name, time_s=(end - start) * 1e-9, energy_j=None, reason=_IMPORT_ERROR,
                           start_ns=start, end_ns=end)

    @contextlib.contextmanager
    def window(self, name: str, settle: bool = False) -> Iterator[_Window]:
        w = _Window(name)
        self.begin_window(name)
        try:
            yield w
        finally:
            w.measurement = self.end_window(name, settle)

    def problems(self) -> List[dict]:
        """Sensors that are absent or failing, each with why."""
        return self._native.problems() if self._native is not None else [
            {"name": "energy_module_missing", "severity": "info", "description": _IMPORT_ERROR}]

    def series(self) -> List[dict]:
        """Every reading so far: per series its device, sensor, unit, source, t_ns and value lists."""
        return self._native.series() if self._native is not None else []

    def stop(self) -> None:
        if self._native is not None:
            self._native.stop()
            self._native = None

    def __enter__(self) -> "Monitor":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
