"""Pause and resume an outer `magneton record` from inside the program.

    magneton.stop()     # kernels from here on are not recorded ...
    warmup()
    magneton.start()    # ... until here
    train_step()

`magneton record --start-paused -- python train.py` records nothing until the
first magneton.start(). These calls reach magneton_start()/magneton_stop() in
the injection library (libmagneton_cupti.so) that `magneton record` puts into
the process; without it they do nothing and warn once. They may be called
before CUDA is initialized: the choice is kept until recording starts.
"""

import ctypes
import os
import warnings

__all__ = ["start", "stop", "recording"]

_lib = None
_searched = False
_warned = False


def _library():
    """The injection library's entry points, or None outside `magneton record`."""
    global _lib, _searched
    if _searched:
        return _lib
    _searched = True
    handles = []
    path = os.environ.get("MAGNETON_CUPTI_LIB")
    # Loading it by path gives the very library CUDA loads (or will load) from
    # CUDA_INJECTION64_PATH: one copy per process, whichever comes first.
    if path and os.environ.get("CUDA_INJECTION64_PATH") == path:
        try:
            handles.append(ctypes.CDLL(path))
        except OSError:
            pass
    try:  # already in the global namespace (preloaded, or linked in)
        handles.append(ctypes.CDLL(None))
    except OSError:
        pass
    for h in handles:
        if hasattr(h, "magneton_start") and hasattr(h, "magneton_stop"):
            h.magneton_start.restype = None
            h.magneton_stop.restype = None
            h.magneton_recording.restype = ctypes.c_int
            _lib = h
            break
    return _lib


def _call(name):
    global _warned
    lib = _library()
    if lib is None:
        if not _warned:
            warnings.warn(
                f"magneton.{name}(): not running under `magneton record`; nothing to {name}",
                RuntimeWarning,
                stacklevel=3,
            )
            _warned = True
        return False
    getattr(lib, "magneton_" + name)()
    return True


def start():
    """Resume (or, with --start-paused, begin) recording. True when a recorder heard it."""
    return _call("start")


def stop():
    """Pause recording until the next start(). True when a recorder heard it."""
    return _call("stop")


def recording():
    """True while `magneton record` is recording this process's kernels."""
    lib = _library()
    return bool(lib is not None and lib.magneton_recording())
