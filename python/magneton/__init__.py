"""Magneton: a differential energy debugger for ML systems (Python front).

    with magneton.record("run.mgt", energy="nvml"):
        model(x)

The C++ extension modules are optional per machine; what is missing raises
ImportError only when it is used."""

from magneton.recorder import fingerprint, load_run, record, schedule
from magneton.op_replay import replay

__all__ = ["record", "schedule", "fingerprint", "load_run", "replay"]

try:  # live energy windows (monitor.py)
    from magneton.monitor import *  # noqa: F401,F403
    from magneton import monitor as _monitor

    __all__ += list(getattr(_monitor, "__all__", []))
except ImportError:
    pass

try:  # start()/stop() of an outer recording (control.py)
    from magneton.control import *  # noqa: F401,F403
    from magneton import control as _control

    __all__ += list(getattr(_control, "__all__", []))
except ImportError:
    pass


def __getattr__(name):
    """magneton.record_jax (jax_recorder.py), imported on first use so that
    torch-only programs do not import JAX."""
    if name == "record_jax":
        from magneton.jax_recorder import record_jax

        return record_jax
    raise AttributeError(f"module 'magneton' has no attribute {name!r}")
