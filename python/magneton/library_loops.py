"""Loops of installed code that drive a script's steps (a Trainer's
`train()`, one long `generate()`), found by sampling the stack.

ScriptSteps watches only the user's own loops: jumps in installed code are
switched off at their first event, so libraries run untouched. Where the
user's code calls a library from outside any loop of its own and the
library loops over the steps, that would leave nothing to watch. So while
no step loop has been found, a thread samples the script's stack every
SAMPLE_S; the installed loops that enclose the running code in at least
SHARE of the samples of the last WINDOW taken while operators ran are
adopted, and their jumps are switched on again (sys.monitoring's
restart_events) to be judged as the user's loops are. A sample whose user
frames sit inside a loop of the user's counts for nothing: that loop
drives the steps and is watched already. Only frames the script called are
looked at, not the code that runs the script (runpy's, magneton's): a loop
there encloses every sample, and adopted, it made every loop of the
script a nested one (a decoding loop at the top of a script was taken at
its 8th iteration, not its 2nd, where building the model had taken long
enough to be sampled).
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from typing import Callable

SAMPLE_S = 0.05
WINDOW = 40     # samples: two seconds
SHARE = 0.6     # of the samples in the window taken while operators ran


class LibraryLoops:
    """Samples the stack of the thread that constructs it until stop() or found()."""

    def __init__(self, is_users: Callable, loops_at: Callable, counted_ops: Callable[[], int], script=None):
        self.adopted: frozenset = frozenset()  # (code, loop head) of installed loops watched as the user's
        self._script = script  # the script's top-level code: the frames below it run the script
        self._is_users = is_users
        self._loops_at = loops_at  # (code, offset) -> the loops of code whose body holds it
        self._counted_ops = counted_ops
        self._thread_id = threading.get_ident()
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._run, name="magneton-library-loops", daemon=True)

    def start(self) -> None:
        self._sampler.start()

    def found(self) -> None:
        """The step loop is found: no more sampling (called on the script's thread, so no join)."""
        self._done.set()

    def stop(self) -> None:
        self._done.set()
        if self._sampler.is_alive():
            self._sampler.join()

    def _run(self) -> None:
        try:
            self._sample()
        except Exception:  # noqa: BLE001 - a frame torn down under the sampler: stop sampling, quietly
            pass

    def _sample(self) -> None:
        window: collections.deque = collections.deque(maxlen=WINDOW)
        ops = self._counted_ops()
        while not self._done.wait(SAMPLE_S):
            now = self._counted_ops()
            frame = sys._current_frames().get(self._thread_id)
            window.append(self._loops_around(frame) if now > ops and frame is not None else None)
            ops = now
            busy = [s for s in window if s is not None]
            if len(busy) < WINDOW // 2:
                continue
            counts = collections.Counter(loop for s in busy for loop in s)
            new = {loop for loop, n in counts.items() if n >= SHARE * len(busy)} - self.adopted
            if new:
                self.adopted = self.adopted | new
                sys.monitoring.restart_events()  # the jumps switched off at their first event fire again
                window.clear()

    def _loops_around(self, frame):
        """The installed loops enclosing `frame`'s running code and its callers', or None
        where one of the user's loops encloses it (a sample of no use here)."""
        loops = set()
        while frame is not None:
            code = frame.f_code
            around = self._loops_at(code, frame.f_lasti)
            if self._is_users(code):
                if around:
                    return None
            elif not code.co_filename.startswith(_OWN):
                loops |= around
            if code is self._script:
                break
            frame = frame.f_back
        return loops


_OWN = os.path.dirname(os.path.abspath(__file__)) + os.sep  # magneton's own code: it drives no step
