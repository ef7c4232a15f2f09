"""Records a JAX function into a Magneton run (docs/jax.md).

    from magneton.jax_recorder import record_jax
    rec = record_jax(model, params, x, path="jax.mgt", energy="nvml")
    y = rec.outputs

The run has the same shape as a torch recording: ops ("jax:dot_general",
framework "jax") with dataflow edges, tensors with fingerprints computed by the
same ATen code, call-site stacks, named scopes, a configuration snapshot and,
on a GPU, XLA's kernels linked to the op that launched them.

Two passes: the value pass walks the jaxpr equation by equation (every value
exists, so every edge gets a fingerprint); the measured pass runs the program
as it really executes (jit equations as their compiled XLA executables) with
the kernel tracer and the energy samplers on. With `measured=K`, K calls of the
program as its own loop makes them follow in the same file (docs/recording.md,
"JAX").
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import jax
import jax.numpy as jnp
from jax.extend import core as jcore

from magneton.jax import environment, kernels, native, timeline
from magneton.jax.graph import NONE, Graph, Range
from magneton.jax.walk import Walker
from magneton.recorder import IDLE_HOLD_SECONDS, TRACE_AUTO_SECONDS, TRACE_AUTO_STEPS

__all__ = ["record_jax", "JaxRun", "JaxRecording", "dataflow_completeness"]

ENERGY_CHOICES = ("none", "nvml", "rapl", "auto")
WRITE_EVERY_NS = 500_000_000  # the op-level executions' rows are written this often


@dataclass
class JaxRecording:
    outputs: Any                  # what fn(*args) returned (from the measured pass)
    graph: Graph                  # the rows, as written
    path: Optional[str] = None
    summary: dict = field(default_factory=dict)


def record_jax(fn, *args, path: Optional[str] = None, energy: str = "none", fingerprints: bool = True,
               repeat: int = 1, overwrite: bool = False, kernels: bool = True, stacks: bool = True,
               max_unroll: int = 256, fingerprint_options: Optional[dict] = None, measured: int = 0,
               wait_each: bool = False) -> JaxRecording:
    """Records `fn(*args)`; writes the run to `path` (in memory only when None).

    fn: any JAX-traceable function (jitted or not); bind keyword or static
        arguments with functools.partial. args: arrays or pytrees of arrays.
    energy: "none", "nvml", "rapl" or "auto" (the samplers run during the measured pass).
    repeat: executions in the measured pass; each is recorded as its own ops,
        as a Python loop of `repeat` calls would be under the torch recorder.
    max_unroll: scan/while loops up to this many iterations are recorded per
        iteration; longer ones as one op.
    measured: with `path`, after the `repeat` executions, calls `fn(*args)`
        this many times as the program's own loop does: no binding per
        equation and, unless `wait_each`, no wait per call (only the last
        call's outputs are waited for), each call's end a step mark. A
        jitted `fn` runs its compiled executable; one that is not jitted
        runs eagerly, operation by operation, which is how it runs. The file notes where these calls
        begin (RunInfo extra "measured_from_ns"), and `magneton diff` costs
        the regions from them: the `repeat` executions give each region its
        ops and kernels, these calls the time and energy as the program runs.
        0: none (the file is as without the option).
    wait_each: with `measured`, wait for each call's outputs before the
        next, as a loop that reads every result does (a loss printed each
        step, a sample handed on); the default queues the calls back to back.
    """
    if measured < 0 or (measured and path is None):
        raise ValueError(f"measured={measured}: must be 0, or at least 1 with a path to write the calls to")
    run = JaxRun(fn, args, path=path, energy=energy, fingerprints=fingerprints, repeat=repeat, overwrite=overwrite,
                 kernels=kernels, stacks=stacks, max_unroll=max_unroll, fingerprint_options=fingerprint_options,
                 warm_call=measured > 0)
    if measured:
        run.begin_calls()
        out = None
        try:
            for _ in range(measured):
                out = fn(*args)
                if wait_each:
                    jax.block_until_ready(out)
                run.mark_call(out)
            jax.block_until_ready(out)
        except BaseException:
            run.calls_failed()
            raise
        run.end_calls()
    return run.finish()


class JaxRun:
    """One JAX recording in its three phases, so that a caller can drive the
    program's own calls between them (record_jax loops over fn; the
    one-command route lets the script's loop make them, jax_script.py):
    constructing it runs the value pass and the op-level executions (the
    recording), `begin_calls`/`mark_call`/`end_calls` frame the program's own
    calls, `finish` links the kernels and closes the file."""

    def __init__(self, fn, args, path: Optional[str] = None, energy: str = "none", fingerprints: bool = True,
                 repeat: int = 1, overwrite: bool = False, kernels: bool = True, stacks: bool = True,
                 max_unroll: int = 256, fingerprint_options: Optional[dict] = None, warm_call: bool = False,
                 base_frames: Optional[list] = None):
        if repeat < 1:
            raise ValueError(f"repeat={repeat}: must be at least 1")
        if energy not in ENERGY_CHOICES:
            raise ValueError(f"energy={energy!r}: expected one of {', '.join(ENERGY_CHOICES)}")
        if path is not None and os.path.exists(path) and not overwrite:  # before any work; the writer checks again
            raise FileExistsError(f"{path}: already exists; not overwriting it (pass overwrite=True)")
        self.path, self.energy, self.repeat = path, energy, repeat
        leaves = jax.tree_util.tree_leaves(args)
        closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*args)
        # The op-level executions run the program's own executables, donation
        # included (its buffer aliasing adds device copies of its own), on
        # copies of the inputs they donate: the program's stay alive.
        donated = _donated_inputs(closed)
        self._out_tree = jax.tree_util.tree_structure(out_shape)

        # Value pass: ops, dataflow, fingerprints.
        self.devices = devices = environment.Devices()
        self._fp = fp = native.Fingerprinter(**(fingerprint_options or {})) if fingerprints else None
        self.g = g = Graph()
        self._walker = walker = Walker(g, fp, devices.of, max_unroll=max_unroll, stacks=stacks,
                                       base_frames=base_frames if base_frames is not None else _caller_frames())
        walker.run(_without_donation(closed), leaves)
        top_ops = [op.id for op in g.ops if op.parent == NONE]

        # Warm-up: compiles the jit executables, so the measured pass sees none of it.
        timeline.measured_pass(closed, _fresh(leaves, donated), top_ops, timeline.NoSession())
        if warm_call:
            jax.block_until_ready(fn(*args))  # the program's own call compiles (or traces) apart
        self._plans = _kernel_plans(closed, top_ops, g, len(g.ops), repeat) if path and kernels and devices.rows \
            else {}

        # Each execution's copies are made before the tracer starts, so that
        # no copy of Magneton's is among the recorded device work.
        inputs = [leaves] * repeat
        if donated:
            inputs = jax.block_until_ready([_fresh(leaves, donated) for _ in range(repeat)])
        self.session = session = timeline.NoSession()
        start_ns = time.monotonic_ns()
        if path is not None:
            writer = native.jax_writer()
            if writer is None:
                raise ImportError(f"writing a run needs the torch extension: {native.load_error()}")
            session = self.session = writer.Session(path, overwrite=overwrite, energy=energy, kernels=kernels,
                                                    command=environment.command_line(), start_ns=start_ns,
                                                    devices=devices.rows)
        self._n_ops = n_ops = len(g.ops)
        if path is not None:
            # What is known before the measured pass goes to the file at once; then
            # each execution's rows as it ends: a killed recording keeps all but the last.
            ids = list(session.device_ids)
            _map_devices(g, lambda local: ids[local])
            g.config = environment.config_snapshot()
            session.write({"frames": _rows(g.frames), "stacks": _rows(g.stacks), "config": g.config,
                           "extra": environment.info_extra()})
        self._windows, outputs, self._ranges, pending = {}, None, [], []

        def write_pending():
            # Rows of the executions since the last write; building them is the
            # recorder's work, so it waits until the executions stop for a while.
            for k, w in pending:
                execution = timeline.execution_rows(g, k, dict(zip(top_ops, w)), walker.busy_ns)
                session.write({"tensors": _rows(execution.tensors), "ops": _rows(execution.ops)})
                self._ranges.extend(_scope_ranges(execution, first_id=len(self._ranges)))
                if k == 0:
                    g.ops = execution.ops  # the in-memory recording keeps execution 0, timed
            pending.clear()

        try:
            self.start_ns = start_ns = time.monotonic_ns()  # the run's window is the measured pass
            written_ns = start_ns
            for k in range(repeat):
                w, outputs = timeline.measured_pass(closed, inputs[k], top_ops, session, op_offset=k * n_ops)
                inputs[k] = None
                self._windows.update({op + k * n_ops: win for op, win in zip(top_ops, w)})
                if path is not None:
                    pending.append((k, w))
                    # A killed recording keeps the executions written up to half a
                    # second before; a shorter one has no writes inside its window.
                    if time.monotonic_ns() - written_ns > WRITE_EVERY_NS:
                        write_pending()
                        written_ns = time.monotonic_ns()
            self.end_ns = time.monotonic_ns()
            write_pending()
            # Where the recording pass's device work ended: the program's own
            # calls may follow at once (the one-command route), before the
            # measured pass is begun (docs/run-format.md, run_info).
            jax.block_until_ready(outputs)
            self.recorded_until_ns = time.monotonic_ns()
        except BaseException:
            if path is not None:
                session.stop({"stats": [{"name": "jax_measured_pass_failed", "severity": "error", "value": 1,
                                         "description": "the measured pass raised; the run holds no ops"}]},
                             time.monotonic_ns())
            raise
        self.outputs = outputs
        self._calls = 0
        self._traced_from: Optional[float] = None  # monotonic seconds at the first traced call's end
        self._idle_held = False                    # held where tracing stopped, not at the end
        self._held: dict = {}                      # its RunInfo extra
        self._marks: Optional[list] = None   # host-timed calls: their step marks
        self._measured_from: Optional[int] = None
        self._host_calls: dict = {}

    def begin_calls(self) -> None:
        """The program's own calls begin now (after the op-level executions'
        outputs are ready). With a kernel trace the start goes to the file at
        once, as the torch recorder notes its switch: a killed recording still splits."""
        if self.path is None:
            raise ValueError("the program's own calls need a path to write them to")
        jax.block_until_ready(self.outputs)
        now = time.monotonic_ns()
        if self.session.kernel_tracer:
            self._measured_from = now
            self.session.write({"extra": {"measured_from_ns": str(now),
                                          "recorded_until_ns": str(self.recorded_until_ns)}})
        else:
            self._marks = [now]

    def mark_call(self, outputs=None) -> None:
        """A call (an iteration of the program's loop) ended: a step mark.
        Past 20 traced calls and 2 s, kernel tracing stops and the later
        calls run untraced, as the program runs (CUPTI costs a launch-bound
        step microseconds per kernel; docs/recording.md, "Untraced steps"):
        `outputs`, the latest call's, are waited for first."""
        self._calls += 1
        if self._marks is not None:
            self._marks.append(time.monotonic_ns())
            return
        self.session.mark_step()
        if self._traced_from is None:
            self._traced_from = time.monotonic()
        elif self._traced_from > 0 and self._calls > TRACE_AUTO_STEPS and \
                time.monotonic() - self._traced_from >= TRACE_AUTO_SECONDS:
            self._traced_from = 0.0  # tracing ended
            wait_for(outputs)
            self._idle_held = _hold_idle(self.session, self.energy, self.devices.rows, self._held)
            self.session.write({"extra": self._held})
            self.session.stop_kernel_tracing()

    def end_calls(self) -> None:
        """The last call's outputs are ready: the stretch of calls ends now."""
        now = time.monotonic_ns()
        if self._marks is None:
            self.end_ns = now
            return
        if self._calls == 0:  # no call to time: the file is as without them
            self._marks = None
            return
        # Without a kernel trace nothing of the calls can be aligned with the
        # op-level executions, which stay the measurement of each region; the
        # calls give the time per call as the program runs (a function not
        # jitted re-traces its transforms on every call, which the op-level
        # executions leave out), as the torch recorder's untraced steps do.
        # The last call's step ends when its outputs are ready.
        marks = self._marks[:-1] + [now]
        first, thread = len(self._ranges), threading.get_native_id()
        self._ranges.extend(Range(id=first + i, name="step", domain="magneton", thread=thread, start_ns=t, end_ns=t)
                            for i, t in enumerate(marks))
        self._host_calls = {"kernels_traced_until_ns": str(self.end_ns)}
        self.end_ns = marks[-1]
        self.g.add_stat("jax_measured_calls_host_timed", "info", len(marks) - 1,
                        "no kernel trace: the program's own calls were timed on the host only (step marks); the "
                        "op-level executions cost the regions")

    def calls_failed(self) -> None:
        self.session.stop({"stats": [{"name": "jax_measured_calls_failed", "severity": "error", "value": 1,
                                      "description": "the program's own calls after the op-level executions raised"}]},
                          time.monotonic_ns())

    def finish(self) -> JaxRecording:
        """Links the kernels, writes what is left and closes the file."""
        g, repeat, path = self.g, self.repeat, self.path
        if path is None:
            timeline.replicate(g, repeat)
            timeline.lay_out(g, self._walker.busy_ns * repeat, self._windows)
            g.config = environment.config_snapshot()
        timeline.scope_ranges(g)
        g.info = {"command": environment.command_line(), "start_ns": self.start_ns, "end_ns": self.end_ns,
                  "extra": {**environment.info_extra(), **_iteration_extra(repeat, self._measured_from),
                            **self._host_calls}}
        g.devices = self.devices.rows
        executions_in_graph = 1 if path is not None else repeat
        _add_stats(g, self._fp, self._walker, repeat, repeat // executions_in_graph)

        tensors = len(g.tensors) + (repeat - 1) * _produced(g) if path is not None else len(g.tensors)
        summary = {"ops": self._n_ops * repeat, "tensors": tensors, "equations_per_execution": self._n_ops,
                   "fingerprint_failures": self._fp.failures if self._fp else 0, "kernel_tracer": False}
        if path is not None:
            g.info["extra"].update(self._held)
            if not self._idle_held:
                _hold_idle(self.session, self.energy, self.devices.rows, g.info["extra"])
            kernel_ops = _link_kernels(self.session, self._plans, g, self._windows, self._measured_from)
            summary.update(self.session.stop({"ranges": _rows(self._ranges), "stats": _rows(g.stats),
                                              "extra": g.info["extra"], "start_ns": self.start_ns},
                                             self.end_ns, kernel_ops))
        return JaxRecording(outputs=jax.tree_util.tree_unflatten(self._out_tree, self.outputs), graph=g, path=path,
                            summary=summary)


def wait_for(outputs) -> None:
    """Waits for a call's outputs to be ready; a leaf donated to a later call
    since is passed over (that call's own outputs are what to wait for)."""
    for leaf in jax.tree_util.tree_leaves(outputs):
        try:
            leaf.block_until_ready()
        except Exception:  # noqa: BLE001 - deleted by donation
            pass


def _donated_inputs(closed) -> list:
    """Positions of the jaxpr's inputs that a top-level equation donates."""
    position = {v: i for i, v in enumerate(closed.jaxpr.invars)}
    return sorted({position[v] for e in closed.jaxpr.eqns
                   for v, d in zip(e.invars, e.params.get("donated_invars", ()))
                   if d and not isinstance(v, jcore.Literal) and v in position})


def _fresh(leaves: list, donated: list) -> list:
    """The inputs, with copies in the positions an execution donates."""
    out = list(leaves)
    for i in donated:
        out[i] = jnp.array(out[i], copy=True)
    return out


def _without_donation(closed):
    """The jaxpr with no top-level equation donating its inputs, for the value
    pass, which binds the equations inside on the program's own arrays."""
    jaxpr = closed.jaxpr
    eqns = [e.replace(params={**e.params, "donated_invars": (False,) * len(e.params["donated_invars"])})
            if any(e.params.get("donated_invars", ())) else e for e in jaxpr.eqns]
    if all(a is b for a, b in zip(eqns, jaxpr.eqns)):
        return closed
    return jcore.ClosedJaxpr(jaxpr.replace(eqns=eqns), closed.consts)


def _iteration_extra(repeat: int, measured_from: Optional[int]) -> dict:
    """Without the program's own calls, each execution of the measured pass is
    one iteration of the program, so the diff's savings are per execution
    (docs/diff.md, "Rank"). With them the diff costs one repetition of the
    recorded step at a time, so the file holds no count, as the torch
    recorder's file of both passes holds none."""
    if measured_from is None:
        return {"iterations": str(repeat)}
    return {"measured_from_ns": str(measured_from)}


def _hold_idle(session, energy: str, device_rows: list, extra: dict) -> bool:
    """With the device's work done (after the measured pass, or where kernel
    tracing stops), holds the GPU idle with the samplers and kernel tracer on:
    counter intervals of known idle for the activity model (docs/energy.md,
    "Idle hold"). Whether it held."""
    if energy == "none" or not session.kernel_tracer or not any(d.get("kind") == "gpu" for d in device_rows):
        return False
    held_from = time.monotonic_ns()
    time.sleep(IDLE_HOLD_SECONDS)
    extra["idle_held_ns"] = f"{held_from} {time.monotonic_ns()}"
    return True


def _kernel_plans(closed, top_ops, g: Graph, n_ops: int, repeat: int) -> dict:
    """For each execution of each top-level jit op: its executable's thunks
    and the equation each computes (kernels.py). Built before the measured
    pass: it compiles the jaxpr again, which energy sampling should not see."""
    plans = {}
    kids = g.children()
    for eqn, op in zip(closed.jaxpr.eqns, top_ops):
        sub = eqn.params.get("jaxpr")
        if eqn.primitive.name not in ("jit", "pjit") or sub is None or not kids[op]:
            continue
        try:
            thunks = kernels.plan(_compiled_hlo(sub, eqn.params.get("donated_invars", ())), g, op)
        except Exception as e:  # an HLO we cannot read: its kernels stay with the jit op
            g.add_stat("jax_hlo_unreadable", "info", 1, f"{g.ops[op].name}: {type(e).__name__}: {e}"[:300])
            continue
        for k in range(repeat):
            plans[op + k * n_ops] = [kernels.Thunk(t.name, t.op + k * n_ops if t.op != NONE else NONE, t.library)
                                     for t in thunks]
    return plans


def _link_kernels(session, plans: dict, g: Graph, windows: dict, measured_from: Optional[int] = None) -> list:
    """Per traced kernel, the op to link it to: the equation it computes when
    its jit's HLO says so, else the top-level op it ran under. Kernels from
    `measured_from` on (the program's own calls) get none: the diff aligns
    them with the recorded ones."""
    if not session.kernel_tracer:
        return []
    traced = session.stop_tracing()
    if not traced:
        return []
    if measured_from is not None:
        traced = [dict(k, op=NONE) if k["start_ns"] >= measured_from else k for k in traced]
    # A runtime that launches from its own threads leaves kernels without the
    # external id; the measured pass waits for each top-level op, so the op's
    # window holds its kernels.
    by_window = kernels.in_windows(traced, windows)
    g.add_stat("jax_kernels_linked_by_time", "info", sum(k["op"] == NONE for k in traced) - by_window.count(NONE),
               "kernels without an external correlation id, linked to the top-level op whose window holds them")
    traced = [dict(k, op=op) for k, op in zip(traced, by_window)]
    linked = kernels.link(traced, plans)
    in_jit = sum(k["op"] in plans for k in traced)
    if in_jit:
        g.add_stat("jax_kernels_linked_to_equations", "info", sum(a != k["op"] for a, k in zip(linked, traced)),
                   f"of {in_jit} kernels of jit executables, linked through XLA's HLO metadata")
    return linked


def _compiled_hlo(sub, donated_invars=()) -> str:
    """Optimized HLO of the executable a jit equation runs (compiled again from
    the same jaxpr with the same donation: same module, same instruction names)."""
    jaxpr, consts = (sub.jaxpr, sub.consts) if hasattr(sub, "consts") else (sub, [])
    fn = jcore.jaxpr_as_fun(jcore.ClosedJaxpr(jaxpr, consts))
    avals = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in jaxpr.invars]
    donate = tuple(i for i, d in enumerate(donated_invars) if d)
    return jax.jit(fn, donate_argnums=donate).lower(*avals).compile().as_text()


def _caller_frames() -> list:
    """(file, line, function) of the Python stack that called record_jax, innermost first."""
    frames, f = [], sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename != __file__:
            frames.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    return frames


def _map_devices(g: Graph, to_run_id) -> None:
    for t in g.tensors:
        if t.device >= 0:
            t.device = to_run_id(t.device)
    for op in g.ops:
        if op.device >= 0:
            op.device = to_run_id(op.device)


def _add_stats(g: Graph, fp, walker: Walker, repeat: int, ops_factor: int) -> None:
    """ops_factor: executions the recording holds for each one `g` holds."""
    if fp is not None and fp.failures:
        g.add_stat("fingerprint_failures", "info", fp.failures * repeat,
                   "values whose fingerprint could not be computed (complex, PRNG keys, tokens)")
    if any(op.parent != NONE for op in g.ops):
        g.add_stat("jax_nested_times_estimated", "info", sum(op.parent != NONE for op in g.ops) * ops_factor,
                   "ops inside a jit/scan/while share their parent's measured time in proportion "
                   "to their eager time (docs/jax.md)")


def _rows(items) -> list:
    """Rows as the writer takes them. They share their lists and fingerprint
    dicts with the graph (the writer reads them before it returns): a deep
    copy (dataclasses.asdict) cost ~40 us a row, most of the recorder's time
    per execution."""
    return [dict(vars(x)) for x in items]


def _produced(g: Graph) -> int:
    return sum(t.producer != NONE for t in g.tensors)


def _scope_ranges(execution: Graph, first_id: int) -> list:
    """The named-scope ranges of one execution, numbered after those before it."""
    for r in execution.ranges:
        r.id += first_id
        if r.parent != NONE:
            r.parent += first_id
    return execution.ranges


def dataflow_completeness(g: Graph) -> float:
    """Fraction of ops whose every tensor input is produced by an earlier op
    or is a graph input (an argument or constant of the recorded function)."""
    if not g.ops:
        return 1.0
    inputs = {t.id for t in g.tensors if t.producer == NONE}
    ok = sum(all(i in inputs or 0 <= g.tensors[i].producer < op.id for i in op.inputs) for op in g.ops)
    return ok / len(g.ops)
