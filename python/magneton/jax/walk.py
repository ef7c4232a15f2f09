"""Walks a jaxpr equation by equation with concrete values (the value pass).

Every equation becomes an Op and every value a Tensor, so the dataflow is
exact: JAX values are immutable and each jaxpr variable is written once.
Leaf equations are evaluated with their primitive's bind, one at a time, so
the value on every edge exists and can be fingerprinted. Higher-order
equations (jit, closed_call, custom_jvp_call, custom_vjp_call, remat, scan,
while, cond) become a tensor-less op whose children are the equations of
their sub-jaxprs, walked with the values the primitive would pass them;
loops are unrolled up to `max_unroll` iterations, longer ones bound whole.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

import jax
import numpy as np
from jax._src import source_info_util
from jax.extend import core as jcore

from magneton.jax.graph import NONE, Graph, Op

# Leaf pairs: (value, tensor id). A literal has tensor id None: like a Python
# scalar argument of a torch op, it is not a tensor edge.
Pair = tuple


def _open(j) -> tuple:
    """(jaxpr, consts) of a Jaxpr or ClosedJaxpr."""
    if hasattr(j, "consts") and hasattr(j, "jaxpr"):
        return j.jaxpr, list(j.consts)
    return j, []


def _aval_str(aval) -> str:
    try:
        return aval.str_short(short_dtypes=True)
    except Exception:  # tokens, refs: whatever JAX prints
        return str(aval)


def _param_str(value) -> str:
    if isinstance(value, (jcore.Jaxpr, jcore.ClosedJaxpr)):
        return "<jaxpr>"
    if isinstance(value, tuple) and value and isinstance(value[0], (jcore.Jaxpr, jcore.ClosedJaxpr)):
        return f"<{len(value)} jaxprs>"
    if callable(value):
        return "<fn>"
    s = str(value)
    return s if len(s) <= 160 else s[:157] + "..."


# Parameters that say nothing about the computation (sharding and layout
# bookkeeping, callbacks): left out of the schema so two runs compare.
_SCHEMA_SKIP = {"in_shardings", "out_shardings", "in_layouts", "out_layouts", "donated_invars",
                "ctx_mesh", "keep_unused", "inline", "compiler_options_kvs", "out_sharding",
                "sharding", "jvp_jaxpr_fun", "fwd_jaxpr_thunk", "bwd", "out_trees", "jvp",
                "ft_in", "ft_out"}


def _schema(eqn) -> str:
    ins = ", ".join(_aval_str(v.aval) for v in eqn.invars)
    outs = ", ".join(_aval_str(v.aval) for v in eqn.outvars)
    params = ", ".join(f"{k}={_param_str(v)}" for k, v in sorted(eqn.params.items())
                       if k not in _SCHEMA_SKIP)
    s = f"{eqn.primitive.name}({ins}) -> ({outs})"
    return f"{s} {{{params}}}" if params else s


def _op_name(eqn) -> str:
    name = eqn.params.get("name")
    if isinstance(name, str) and name:
        return f"jax:{eqn.primitive.name}({name})"
    return f"jax:{eqn.primitive.name}"


def _last_used(jaxpr) -> dict:
    """Var -> the last equation reading it (outputs are read after all)."""
    last = {}
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if not isinstance(v, jcore.Literal):
                last[v] = eqn
    for v in jaxpr.outvars:
        if not isinstance(v, jcore.Literal):
            last[v] = None
    return last


def _block(values) -> None:
    for v in values:
        if isinstance(v, jax.Array):
            v.block_until_ready()


class Walker:
    """One value pass. `fingerprint(value) -> dict | None` summarizes a value;
    `device_of(value) -> int` gives its Run device id."""

    def __init__(self, graph: Graph, fingerprint: Optional[Callable[[Any], Optional[dict]]],
                 device_of: Callable[[Any], int], max_unroll: int = 256, stacks: bool = True,
                 base_frames: Optional[list] = None):
        self.g = graph
        self.fingerprint = fingerprint
        self.device_of = device_of
        self.max_unroll = max_unroll
        self.stacks = stacks
        self.base_frames = list(base_frames or [])  # (file, line, function) of the recorder's caller
        self._op_frames: list = []                   # by op id: its call path
        self.thread = threading.get_native_id()
        self._inputs: dict[int, tuple] = {}   # id(value) -> (value, tensor id), kept alive
        self.busy_ns: list[int] = []           # by op id: execution time without fingerprinting
        self._structured_ops: set[int] = set()  # ops whose time is their children's
        self._structured = {
            "jit": self._call, "pjit": self._call, "closed_call": self._call, "core_call": self._call,
            "remat": self._call, "remat2": self._call, "checkpoint": self._call,
            "custom_jvp_call": self._call, "custom_vjp_call": self._call,
            "custom_vjp_call_jaxpr": self._call,
            "scan": self._scan, "while": self._while, "cond": self._cond,
        }

    # ---- tensors ---------------------------------------------------------------
    def graph_input(self, value) -> Pair:
        """The tensor row of a value no recorded op produced (argument, constant)."""
        hit = self._inputs.get(id(value))
        if hit is not None and hit[0] is value:
            return value, hit[1]
        t = self._row(value, NONE)
        self._inputs[id(value)] = (value, t)
        return value, t

    def _row(self, value, producer: int) -> int:
        arr = value if hasattr(value, "shape") and hasattr(value, "dtype") else np.asarray(value)
        shape = [int(d) for d in arr.shape]
        strides, acc = [0] * len(shape), 1
        for i in range(len(shape) - 1, -1, -1):
            strides[i] = acc
            acc *= max(shape[i], 1)
        fingerprint = self.fingerprint(value) if self.fingerprint is not None else None
        t = self.g.new_tensor(storage=0, shape=shape, strides=strides, dtype=str(arr.dtype),
                              device=self.device_of(value), fingerprint=fingerprint, producer=producer)
        t.storage = t.id  # a JAX value owns its buffer: no views, no in-place writes
        return t.id

    # ---- walking ---------------------------------------------------------------
    def run(self, closed_jaxpr, args) -> list:
        jaxpr, consts = _open(closed_jaxpr)
        outs = self.eval(jaxpr, [self.graph_input(c) for c in consts],
                         [self.graph_input(a) for a in args], NONE)
        # Children have larger ids than their parent: one backward sweep sums them up.
        for op in reversed(self.g.ops):
            if op.parent != NONE and op.parent in self._structured_ops:
                self.busy_ns[op.parent] += self.busy_ns[op.id]
        return outs

    def eval(self, jaxpr, consts: list, args: list, parent: int) -> list:
        env: dict = {}

        def read(v) -> Pair:
            if isinstance(v, jcore.Literal):
                return v.val, None
            return env[v]

        for v, p in zip(jaxpr.constvars, consts):
            env[v] = p
        for v, p in zip(jaxpr.invars, args):
            env[v] = p
        last_use = _last_used(jaxpr)
        for eqn in jaxpr.eqns:
            outs = self.equation(eqn, [read(v) for v in eqn.invars], parent)
            for v, p in zip(eqn.outvars, outs):
                if not isinstance(v, jcore.DropVar):
                    env[v] = p
            for v in eqn.invars:  # a value no later equation reads is freed now
                if not isinstance(v, jcore.Literal) and last_use.get(v) is eqn:
                    env.pop(v, None)
        return [read(v) for v in jaxpr.outvars]

    def equation(self, eqn, ins: list, parent: int) -> list:
        si = eqn.source_info
        frames = self._frames_of(si, parent)
        op = self.g.new_op(name=_op_name(eqn), schema=_schema(eqn), parent=parent, thread=self.thread,
                           inputs=[t for _, t in ins if t is not None], scope=str(si.name_stack),
                           stack=self.g.stack_id(frames) if self.stacks else NONE)
        self._op_frames.append(frames)
        self.busy_ns.append(0)
        handler = self._structured.get(eqn.primitive.name)
        inner = None
        if handler is not None:
            op.start_ns = time.monotonic_ns()
            with source_info_util.user_context(si.traceback, name_stack=si.name_stack), eqn.ctx.manager:
                inner = handler(eqn, ins, op)
            op.end_ns = time.monotonic_ns()
        if inner is not None:
            # Walked into: the op is a scope around its equations and lists no
            # tensors itself, so matching sees the equations (the children
            # read and write the values) rather than one opaque node.
            self._structured_ops.add(op.id)
            op.inputs = []
            return inner
        values = self.bind(eqn, [v for v, _ in ins], op)  # a leaf, or a structure bound whole
        outs = [(value, self._row(value, op.id)) for value in values]
        op.outputs = [t for _, t in outs]
        ref = op.outputs or op.inputs
        if ref:
            op.device = self.g.tensors[ref[0]].device
        return outs

    def bind(self, eqn, values: list, op: Op) -> list:
        si = eqn.source_info
        params = eqn.primitive.get_bind_params(eqn.params)
        if isinstance(params, tuple):  # older JAX: (subfuns, params)
            subfuns, params = params
            values = [*subfuns, *values]
        # The first call of a primitive on new shapes compiles it; an equation
        # without side effects runs twice and the second run is its time.
        for _ in range(1 if eqn.effects else 2):
            with source_info_util.user_context(si.traceback, name_stack=si.name_stack), eqn.ctx.manager:
                op.start_ns = time.monotonic_ns()
                out = eqn.primitive.bind(*values, **params)
                out = list(out) if eqn.primitive.multiple_results else [out]
                _block(out)
                op.end_ns = time.monotonic_ns()
        self.busy_ns[op.id] = op.end_ns - op.start_ns
        return out

    def _frames_of(self, source_info, parent: int) -> list:
        """The call path of an equation, innermost first: its user frames
        (JAX cuts a traceback at the trace boundary, e.g. a jit), then those
        of the enclosing equation, then the caller of the recorder."""
        outer = self._op_frames[parent] if parent != NONE else self.base_frames
        if not self.stacks:
            return outer
        try:
            own = [(f.file_name, f.start_line, f.function_name)
                   for f in source_info_util.user_frames(source_info.traceback)]
        except Exception:
            own = []
        return own + outer

    # ---- structured equations: return inner (value, tensor id) pairs, or None to bind whole
    def _call(self, eqn, ins, op):
        p = eqn.params
        sub = p.get("jaxpr", p.get("call_jaxpr"))
        if sub is None:
            return None
        jaxpr, consts = _open(sub)
        if len(jaxpr.invars) != len(ins) or len(jaxpr.constvars) != len(consts):
            return None
        return self.eval(jaxpr, [self.graph_input(c) for c in consts], ins, op.id)

    def _scan(self, eqn, ins, op):
        p = eqn.params
        length = int(p["length"])
        if length > self.max_unroll or p.get("_split_transpose"):
            return None
        jaxpr, consts = _open(p["jaxpr"])
        if "ft_in" in p:
            c_ins, carry, xs = (list(x) for x in p["ft_in"].update(ins).unpack())
            num_carry = len(carry)
        else:
            nc, num_carry = int(p["num_consts"]), int(p["num_carry"])
            c_ins, carry, xs = ins[:nc], ins[nc:nc + num_carry], ins[nc + num_carry:]
        if len(jaxpr.constvars) != len(consts):
            return None
        consts_p = [self.graph_input(c) for c in consts]
        order = range(length - 1, -1, -1) if p["reverse"] else range(length)
        ys_steps = []
        for i in order:
            x_i = [self._synthetic("jax:scan.slice", [x], lambda v, i=i: v[i], op) for x in xs]
            outs = self.eval(jaxpr, consts_p, [*c_ins, *carry, *x_i], op.id)
            carry, ys = outs[:num_carry], outs[num_carry:]
            ys_steps.append(ys)
        if p["reverse"]:
            ys_steps.reverse()
        n_ys = len(jaxpr.outvars) - num_carry
        stacked = [self._synthetic("jax:scan.stack", [step[k] for step in ys_steps],
                                   lambda *vs: jax.numpy.stack(vs), op)
                   for k in range(n_ys)] if length else None
        if stacked is None:
            return None
        return [*carry, *stacked]

    def _while(self, eqn, ins, op):
        p = eqn.params
        cond_j, cond_c = _open(p["cond_jaxpr"])
        body_j, body_c = _open(p["body_jaxpr"])
        cn, bn = int(p["cond_nconsts"]), int(p["body_nconsts"])
        cond_consts = [self.graph_input(c) for c in cond_c] + ins[:cn]
        body_consts = [self.graph_input(c) for c in body_c] + ins[cn:cn + bn]
        carry = ins[cn + bn:]
        if len(cond_j.constvars) != len(cond_c) or len(body_j.constvars) != len(body_c):
            return None
        for _ in range(self.max_unroll + 1):
            (pred, _), = self.eval(cond_j, cond_consts[:len(cond_c)], cond_consts[len(cond_c):] + carry, op.id)
            if not bool(pred):
                return carry
            carry = self.eval(body_j, body_consts[:len(body_c)], body_consts[len(body_c):] + carry, op.id)
        # Longer than max_unroll: the children recorded so far stay; the op binds whole.
        self.g.add_stat("jax_loops_bound_whole", "info", 1,
                        "while loops longer than max_unroll were executed as one op")
        return None

    def _cond(self, eqn, ins, op):
        branches = eqn.params["branches"]
        (index, _), operands = ins[0], ins[1:]
        k = int(np.clip(int(index), 0, len(branches) - 1))
        jaxpr, consts = _open(branches[k])
        if len(jaxpr.constvars) != len(consts):
            return None
        return self.eval(jaxpr, [self.graph_input(c) for c in consts], operands, op.id)

    def _synthetic(self, name: str, ins: list, fn, parent: Op) -> Pair:
        """An op the primitive performs implicitly (slicing a scan's xs,
        stacking its ys): recorded so the dataflow stays connected."""
        op = self.g.new_op(name=name, schema=name.split(":", 1)[1], parent=parent.id,
                           thread=self.thread, inputs=[t for _, t in ins if t is not None],
                           scope=parent.scope, stack=parent.stack)
        self._op_frames.append(self._op_frames[parent.id])
        op.start_ns = time.monotonic_ns()
        value = fn(*[v for v, _ in ins])
        _block([value])
        op.end_ns = time.monotonic_ns()
        self.busy_ns.append(op.end_ns - op.start_ns)
        t = self._row(value, op.id)
        op.outputs.append(t)
        op.device = self.g.tensors[t].device
        return value, t
