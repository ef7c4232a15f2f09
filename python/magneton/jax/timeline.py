"""The measured pass and the times of a JAX recording.

The value pass (walk.py) executes every equation on its own so each value can
be fingerprinted; that is not how the program runs. The measured pass runs the
top-level equations as the program does: a jit equation executes its compiled
(fused) XLA executable, anything else dispatches eagerly. Each top-level op's
id is pushed as the CUPTI external correlation id around it, so the kernels
of an executable are linked to its jit op. Top-level ops take their times from
this pass. Nested ops (the equations inside a jit) have no execution of their
own in a fused executable: they are laid out inside their parent's measured
window, each taking a share proportional to its time in the value pass.
"""

from __future__ import annotations

import time

from jax._src import source_info_util
from jax.extend import core as jcore

from magneton.jax.graph import NONE, Graph, Range
from magneton.jax.walk import _block, _last_used, _open


class NoSession:
    """Kernel correlation stand-in when nothing is traced (in-memory recording)."""

    kernel_tracer = False

    def push(self, op_id):
        pass

    def pop(self):
        pass


def measured_pass(closed_jaxpr, args, top_ops, session, op_offset=0) -> tuple:
    """Executes the top-level equations once; returns (windows, outputs) where
    windows[i] = (start_ns, end_ns) of top-level equation i."""
    jaxpr, consts = _open(closed_jaxpr)
    env = {}
    read = lambda v: v.val if isinstance(v, jcore.Literal) else env[v]
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    windows = []
    last_use = _last_used(jaxpr)
    for eqn, op_id in zip(jaxpr.eqns, top_ops):
        params = eqn.primitive.get_bind_params(eqn.params)
        values = [read(v) for v in eqn.invars]
        if isinstance(params, tuple):
            subfuns, params = params
            values = [*subfuns, *values]
        si = eqn.source_info
        with source_info_util.user_context(si.traceback, name_stack=si.name_stack), eqn.ctx.manager:
            session.push(op_id + op_offset)
            start = time.monotonic_ns()
            out = eqn.primitive.bind(*values, **params)
            out = list(out) if eqn.primitive.multiple_results else [out]
            _block(out)
            end = time.monotonic_ns()
            session.pop()
        windows.append((start, end))
        for v, o in zip(eqn.outvars, out):
            if not isinstance(v, jcore.DropVar):
                env[v] = o
        for v in eqn.invars:
            if not isinstance(v, jcore.Literal) and last_use.get(v) is eqn:
                env.pop(v, None)
    return windows, [read(v) for v in jaxpr.outvars]


def lay_out(g: Graph, busy_ns: list, top_windows: dict) -> None:
    """Sets op times: top-level ops from `top_windows` (op id -> window),
    nested ops packed inside their parent's window in proportion to busy_ns."""
    kids = g.children()

    def place(op_id, start, end):
        op = g.ops[op_id]
        op.start_ns, op.end_ns = start, end
        children = kids[op_id]
        if not children:
            return
        total = sum(busy_ns[c] for c in children)
        scale = (end - start) / total if total > 0 else 0.0
        t = float(start)
        for c in children:
            d = busy_ns[c] * scale if total > 0 else (end - start) / len(children)
            place(c, int(round(t)), int(round(t + d)))
            t += d

    for op in g.ops:
        if op.parent == NONE:
            s, e = top_windows.get(op.id, (op.start_ns, op.start_ns + busy_ns[op.id]))
            place(op.id, s, e)


def _clone(row, **changes):
    """A shallow copy of a row with `changes` (its shape, strides and
    fingerprint are the same objects): a tenth of dataclasses.replace's time."""
    out = object.__new__(type(row))
    out.__dict__.update(row.__dict__)
    out.__dict__.update(changes)
    return out


def replicate(g: Graph, copies: int) -> int:
    """Appends copies-1 more executions of the recorded ops (the measured pass
    ran `copies` times; values are the same each time). Graph inputs are
    shared; produced tensors are new rows per copy. Returns ops per copy."""
    n_ops, n_tensors = len(g.ops), len(g.tensors)
    produced = [t for t in g.tensors[:n_tensors] if t.producer != NONE]
    for k in range(1, copies):
        remap = {}
        for t in produced:
            remap[t.id] = len(g.tensors)
            g.tensors.append(_clone(t, id=len(g.tensors), storage=len(g.tensors), producer=t.producer + k * n_ops))
        for op in g.ops[:n_ops]:
            g.ops.append(_clone(op, id=op.id + k * n_ops,
                                parent=op.parent + k * n_ops if op.parent != NONE else NONE,
                                inputs=[remap.get(i, i) for i in op.inputs],
                                outputs=[remap.get(o, o) for o in op.outputs]))
    return n_ops


def execution_rows(g: Graph, k: int, windows: dict, busy_ns: list) -> Graph:
    """Execution k of the recorded ops as rows of their own (its ops and the
    tensors it produced; the graph inputs are execution 0's, and its named-scope
    ranges), with times laid out from its measured windows (top-level op id ->
    window). Op and tensor ids continue
    after the executions before it, as `replicate` numbers them; the rows can
    be written at once, so a long recording keeps only one execution in memory."""
    n_ops, n_tensors = len(g.ops), len(g.tensors)
    produced = [t for t in g.tensors if t.producer != NONE]
    out = Graph(ops=[_clone(op, inputs=list(op.inputs), outputs=list(op.outputs)) for op in g.ops])
    lay_out(out, busy_ns, windows)
    scope_ranges(out)  # numbered from 0: the caller places them after the executions before
    if k == 0:
        out.tensors = list(g.tensors)
        return out
    first = n_tensors + (k - 1) * len(produced)
    remap = {t.id: first + i for i, t in enumerate(produced)}
    for t in produced:
        out.tensors.append(_clone(t, id=remap[t.id], storage=remap[t.id], producer=t.producer + k * n_ops))
    for op in out.ops:
        op.id += k * n_ops
        op.parent = op.parent + k * n_ops if op.parent != NONE else NONE
        op.inputs = [remap.get(i, i) for i in op.inputs]
        op.outputs = [remap.get(o, o) for o in op.outputs]
    return out


def scope_ranges(g: Graph, domain: str = "jax.named_scope") -> None:
    """Ranges for JAX named scopes: consecutive leaf ops sharing a scope
    prefix form one range per scope level, nested by parent."""
    kids = g.children()
    full = [""] * len(g.ops)
    for op in g.ops:  # parents come first: ids grow with nesting
        base = full[op.parent] if op.parent != NONE else ""
        full[op.id] = "/".join(p for p in (base, op.scope) if p)
    open_ranges: list = []  # Range rows, outermost first
    for op in sorted((o for o in g.ops if not kids[o.id]), key=lambda o: (o.start_ns, o.id)):
        path = [p for p in full[op.id].split("/") if p and not p.startswith(("jit(", "pjit("))]
        keep = 0
        while keep < min(len(path), len(open_ranges)) and open_ranges[keep].name == path[keep]:
            keep += 1
        del open_ranges[keep:]
        for name in path[keep:]:
            parent = open_ranges[-1].id if open_ranges else NONE
            r = Range(id=len(g.ranges), name=name, domain=domain, thread=op.thread,
                      start_ns=op.start_ns, end_ns=op.end_ns, parent=parent)
            g.ranges.append(r)
            open_ranges.append(r)
        for r in open_ranges:
            r.end_ns = max(r.end_ns, op.end_ns)
