"""torch.compile graphs recorded as operators (src/capture/torch/framework_call.h).

Inductor runs a compiled graph through `CompiledFxGraph.__call__(inputs)`;
the kernels it generates are no ATen operators, so the graph's outputs would
have no fingerprints and match nothing on an eager side. In the recording
pass (and wherever operators are recorded), sys.monitoring watches that one function: at its start an operator
"## Call CompiledFxGraph ##" opens with the graph's input tensors, at its
return it closes with the returned tensors (the operators the graph still
runs, extern GEMMs, nest inside). Nothing else is watched, and nothing at all
in a measured pass without operators (a GPU's).
"""

from __future__ import annotations

import sys
import threading

from magneton.monitoring import claim_tool

NAME = "## Call CompiledFxGraph ##"


def _tensors(values, torch) -> list:
    if isinstance(values, torch.Tensor):
        return [values]
    if isinstance(values, (list, tuple)):
        return [v for v in values if isinstance(v, torch.Tensor)]
    return []


class CompiledCalls:
    def __init__(self, ext):
        self._ext = ext
        self._tool = None
        self._code = None
        self._open = threading.local()

    def set_active(self, on: bool) -> None:
        """Watches the compiled graphs' calls while `on` (while operators are recorded)."""
        if on and self._tool is None:
            self._start()
        elif not on and self._tool is not None:
            self.stop()

    def _start(self) -> None:
        mon = getattr(sys, "monitoring", None)
        code_module = sys.modules.get("torch._inductor.output_code")
        graph = getattr(code_module, "CompiledFxGraph", None) if code_module is not None else None
        call = getattr(graph, "__call__", None)
        if mon is None or call is None or not hasattr(call, "__code__"):
            return  # nothing compiled with Inductor in this process (or Python < 3.12)
        self._tool = claim_tool("magneton-compiled")
        if self._tool is None:
            return
        self._code = call.__code__
        ev = mon.events
        mon.register_callback(self._tool, ev.PY_START, self._started)
        mon.register_callback(self._tool, ev.PY_RETURN, self._returned)
        mon.register_callback(self._tool, ev.PY_UNWIND, self._unwound)
        mon.set_local_events(self._tool, self._code, ev.PY_START | ev.PY_RETURN)
        mon.set_events(self._tool, ev.PY_UNWIND)  # no local event: every unwind, checked by code

    def stop(self) -> None:
        mon = getattr(sys, "monitoring", None)
        if mon is None or self._tool is None:
            return
        mon.set_local_events(self._tool, self._code, 0)
        mon.set_events(self._tool, 0)
        for event in (mon.events.PY_START, mon.events.PY_RETURN, mon.events.PY_UNWIND):
            mon.register_callback(self._tool, event, None)
        mon.free_tool_id(self._tool)
        self._tool = self._code = None
        for call in getattr(self._open, "calls", []):
            call.end([])
        self._open.calls = []

    def _calls(self) -> list:
        calls = getattr(self._open, "calls", None)
        if calls is None:
            calls = self._open.calls = []
        return calls

    def _started(self, code, offset):
        import torch

        frame = sys._getframe(1)  # CompiledFxGraph.__call__(self, inputs)
        inputs = frame.f_locals.get("inputs")
        self._calls().append(self._ext.FrameworkCall(NAME, _tensors(inputs, torch)))

    def _returned(self, code, offset, value):
        import torch

        calls = self._calls()
        if calls:
            calls.pop().end(_tensors(value, torch))

    def _unwound(self, code, offset, exc):
        calls = self._calls()
        if code is self._code and calls:
            calls.pop().end([])
