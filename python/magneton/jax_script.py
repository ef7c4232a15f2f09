"""The one-command route for a JAX script (docs/recording.md, "JAX scripts"):
`python -m magneton record -o a.mgt train.py` where the script computes with JAX.

A JAX script calls no ATen operator, so its step loop is found by its calls
of jitted functions: `jax.jit` is watched from the moment jax is imported,
and each call of a function it made counts its jaxpr's equations as
operators (script_steps.py finds the loop that runs enough of them). At the
end of the warm-up the heaviest jitted function the loop calls (its train
or inference step) is chosen; its next call is recorded as record_jax
records a function (values, the op-level executions), just before the
program's own call on the same arguments, and every later iteration of the
loop is one step of the measured pass: the program's own calls, as it makes
them. Other jitted functions run as they are (in the steps' time, in no region).
"""

from __future__ import annotations

import dis
import functools
import importlib.abc
import importlib.util
import sys
import types
from typing import Callable, Optional

from magneton.script_steps import MIN_OPS_PER_STEP, code_objects

JAX_MODULES = ("jax", "flax", "optax", "equinox", "haiku", "jaxlib")


def imports_jax(code: types.CodeType) -> bool:
    """Whether the script's own code imports JAX or a library built on it."""
    for c in code_objects(code):
        for ins in dis.get_instructions(c):
            if ins.opname == "IMPORT_NAME" and str(ins.argval).split(".")[0] in JAX_MODULES:
                return True
    return False


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `then(module)` once the module `name` has been executed (first import)."""

    def __init__(self, name: str, then: Callable):
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # once; the other finders find the real module
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute, then = spec.loader.exec_module, self.then

        def exec_module(module):
            execute(module)
            then(module)

        spec.loader.exec_module = exec_module
        return spec


class _Watched:
    """A jitted function as jax.jit made it, its calls passed through the route."""

    def __init__(self, jitted, route: "JaxScript", static_argnums):
        self._jitted, self._route = jitted, route
        nums = static_argnums if isinstance(static_argnums, (tuple, list)) else \
            () if static_argnums is None else (static_argnums,)
        self._static = tuple(nums)  # static keywords (static_argnames) pass through as keywords
        self.weight: Optional[int] = None  # equations of its jaxpr, counted at its first call
        self.calls = 0
        self.last = None  # its latest call's outputs until the measured steps begin (_settle)

    def __call__(self, *args, **kwargs):
        return self._route.call(self, args, kwargs)

    def __get__(self, obj, objtype=None):  # a jitted method binds as the function jax.jit returns does
        return self if obj is None else types.MethodType(self, obj)

    def __getattr__(self, name):  # lower, trace, eval_shape, __wrapped__, __name__ ...
        return getattr(self._jitted, name)

    @property
    def name(self) -> str:
        return getattr(self._jitted, "__qualname__", None) or getattr(self._jitted, "__name__", "jitted function")

    def bound(self, args: tuple, kwargs: dict):
        """(function of the dynamic arguments, those arguments): static
        arguments (static_argnums) and keywords bound, as record_jax takes them."""
        static = {i % len(args) for i in self._static if -len(args) <= i < len(args)}
        dynamic = [a for i, a in enumerate(args) if i not in static]

        def fn(*values):
            it = iter(values)
            return self._jitted(*[args[i] if i in static else next(it) for i in range(len(args))], **kwargs)
        return fn, dynamic


def _equations(jaxpr) -> int:
    """Equations of a jaxpr and of the jaxprs inside it (jit, scan, cond...)."""
    from jax.extend import core as jcore

    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for p in eqn.params.values():
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(sub, jcore.ClosedJaxpr):
                    n += _equations(sub.jaxpr)
                elif isinstance(sub, jcore.Jaxpr):
                    n += _equations(sub)
    return n


class JaxScript:
    """The route's state: watches jax.jit, counts the jitted calls' equations
    for script_steps.py, records the chosen function's call and marks the
    measured steps. `on_step()` is ScriptSteps' callback; `finish()` writes the file."""

    def __init__(self, path: str, warmup: int = 2, steps: int = 0, say: Callable[[str], None] = None, **recording):
        self.path, self.warmup, self.limit = path, warmup, steps
        self.recording = recording          # JaxRun's options: energy, kernels, stacks, overwrite
        self.say = say or (lambda line: sys.stderr.write(f"magneton: record: {line}\n"))
        self.equations = 0                  # counted operators: equations of the jitted calls so far
        self.watched: list = []
        self.target: Optional[_Watched] = None
        self.run = None                     # the JaxRun once the target's call was recorded
        self.error: Optional[str] = None
        self.steps = 0                      # ScriptSteps' calls of on_step
        self.measured = 0                   # measured steps marked
        self._state = "warm-up"            # warm-up, armed, measuring, done
        self._last = None                   # the latest call's outputs, waited for at the end
        self._original = None

    # ---- watching jax.jit ------------------------------------------------------
    def start(self) -> None:
        jax = sys.modules.get("jax")
        if jax is not None:
            self._patch(jax)
        else:
            sys.meta_path.insert(0, _AfterImport("jax", self._patch))

    def stop(self) -> None:
        for f in [f for f in sys.meta_path if isinstance(f, _AfterImport)]:
            sys.meta_path.remove(f)
        jax = sys.modules.get("jax")
        if jax is not None and self._original is not None:
            jax.jit = self._original

    def _patch(self, jax) -> None:
        original = self._original = jax.jit

        @functools.wraps(original)
        def jit(*args, **kwargs):
            if not args:  # used as a decorator factory: jax.jit(static_argnums=...)(f)
                return lambda fun: jit(fun, **kwargs)
            return _Watched(original(*args, **kwargs), self, kwargs.get("static_argnums"))
        jax.jit = jit

    # ---- the script's calls -------------------------------------------------------
    def counted_ops(self) -> int:
        return self.equations

    def call(self, w: _Watched, args: tuple, kwargs: dict):
        if self._state == "done":
            return w._jitted(*args, **kwargs)
        if self._state == "armed" and w is self.target and self.run is None and self.error is None:
            self._record(w, args, kwargs)
        out = w._jitted(*args, **kwargs)
        w.calls += 1
        if self._state != "measuring":
            w.last = out
        if w.weight is None:
            # After the call, so the trace is JAX's cached one: the function's
            # Python body runs no second time.
            self.watched.append(w)
            try:
                w.weight = max(1, _equations(w._jitted.trace(*args, **kwargs).jaxpr.jaxpr))
            except Exception:  # noqa: BLE001 - a function we cannot weigh counts as a small step
                w.weight = MIN_OPS_PER_STEP
        self.equations += w.weight
        if self._state == "measuring":
            self._last = out
        return out

    def _record(self, w: _Watched, args: tuple, kwargs: dict) -> None:
        from magneton.jax_recorder import JaxRun

        fn, dynamic = w.bound(args, kwargs)
        self._settle()  # the program's calls so far stay out of the recording
        try:
            self.run = JaxRun(fn, dynamic, path=self.path, base_frames=_script_frames(), **self.recording)
        except Exception as e:  # noqa: BLE001 - the program goes on untouched; say what was lost
            self.error = f"recording {w.name} failed: {type(e).__name__}: {e}"
            self.say(f"{self.path}: {self.error}")

    # ---- the step loop ------------------------------------------------------------
    def on_step(self) -> None:
        """The end of an iteration of the step loop, from its second on."""
        self.steps += 1
        if self._state == "warm-up" and self.steps >= self.warmup - 1:
            self.target = self._heaviest()
            self._state = "armed" if self.target is not None else "done"
        elif self._state == "armed" and self.run is not None:
            self._settle()  # this iteration's calls, the recorded one's own among them, stay out of the measured steps
            self.run.begin_calls()
            self._state = "measuring"
        elif self._state == "measuring":
            self.run.mark_call(self._last)
            self.measured += 1
            if self.limit and self.measured >= self.limit:
                self._end_calls()

    def _settle(self) -> None:
        """Waits for the device work of the program's jitted calls so far:
        calls are asynchronous, and one in flight would straddle the
        recording's start or the measured steps' (the device runs a stream's
        work in order, so each function's latest call covers its earlier ones)."""
        from magneton.jax_recorder import wait_for

        for w in self.watched:
            wait_for(w.last)
            w.last = None

    def _heaviest(self) -> Optional[_Watched]:
        """The step's function: of those the loop called again (set-up calls
        a function once), the one of the most equations."""
        again = [w for w in self.watched if w.calls >= 2] or self.watched
        return max(again, key=lambda w: w.weight or 0, default=None)

    def _end_calls(self) -> None:
        from magneton.jax_recorder import wait_for

        wait_for(self._last)
        self._last = None
        self.run.end_calls()
        self._state = "done"

    def finish(self):
        """Writes the file (after the script ended); the JaxRecording, or None."""
        self.stop()
        if self.run is None:
            return None
        if self._state == "measuring":
            self._end_calls()
        return self.run.finish()


def _script_frames() -> list:
    """(file, line, function) of the Python stack at the recorded call, innermost
    first, without Magneton's own frames."""
    here = __file__.rsplit("/", 1)[0]
    frames, f = [], sys._getframe(1)
    while f is not None:
        if not f.f_code.co_filename.startswith(here):
            frames.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    return frames
