"""The rows a JAX recording produces, in memory, shaped like the C++ Run model
(src/core/run.h): ops with their input/output tensor ids, tensors with shape,
dtype and fingerprint, call-site stacks and named-scope ranges. Ids are dense
(table[i].id == i) and -1 means "none", as in the store."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

NONE = -1
HOST_DEVICE = -1


@dataclass
class Tensor:
    id: int
    storage: int          # one storage per JAX value: JAX arrays are immutable
    shape: list
    strides: list         # elements, row-major (JAX arrays are dense)
    dtype: str
    device: int = HOST_DEVICE
    offset: int = 0
    version: int = 0
    fingerprint: Optional[dict] = None
    producer: int = NONE  # op id; not stored, the store derives it from op outputs


@dataclass
class Op:
    id: int
    name: str             # "jax:dot_general"
    schema: str = ""
    parent: int = NONE
    framework: str = "jax"
    thread: int = 0
    start_ns: int = 0
    end_ns: int = 0
    stack: int = NONE
    device: int = HOST_DEVICE
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    scope: str = ""       # JAX name stack ("block1/attn"); becomes Range rows
    sequence: int = NONE
    forward_op: int = NONE


@dataclass
class Frame:
    id: int
    function: str
    file: str
    line: int
    kind: str = "python"
    module: str = ""


@dataclass
class Stack:
    id: int
    frames: list          # frame ids, innermost first


@dataclass
class Range:
    id: int
    name: str
    domain: str
    thread: int
    start_ns: int
    end_ns: int
    parent: int = NONE


@dataclass
class Stat:
    name: str
    severity: str
    value: int
    description: str


@dataclass
class Graph:
    """One recording: what the writer turns into store rows."""

    ops: list = field(default_factory=list)
    tensors: list = field(default_factory=list)
    frames: list = field(default_factory=list)
    stacks: list = field(default_factory=list)
    ranges: list = field(default_factory=list)
    stats: list = field(default_factory=list)
    devices: list = field(default_factory=list)   # dicts shaped like run.h Device
    info: dict = field(default_factory=dict)      # RunInfo fields, "extra" a dict
    config: dict = field(default_factory=dict)
    _frame_ids: dict = field(default_factory=dict, repr=False)
    _stack_ids: dict = field(default_factory=dict, repr=False)

    def new_op(self, **kw) -> Op:
        op = Op(id=len(self.ops), **kw)
        self.ops.append(op)
        return op

    def new_tensor(self, **kw) -> Tensor:
        t = Tensor(id=len(self.tensors), **kw)
        self.tensors.append(t)
        return t

    def stack_id(self, frames) -> int:
        """Deduplicated stack id for (file, line, function) tuples, innermost first."""
        if not frames:
            return NONE
        ids = []
        for key in frames:
            fid = self._frame_ids.get(key)
            if fid is None:
                fid = len(self.frames)
                self.frames.append(Frame(id=fid, file=key[0], line=key[1], function=key[2]))
                self._frame_ids[key] = fid
            ids.append(fid)
        key = tuple(ids)
        sid = self._stack_ids.get(key)
        if sid is None:
            sid = len(self.stacks)
            self.stacks.append(Stack(id=sid, frames=ids))
            self._stack_ids[key] = sid
        return sid

    def add_stat(self, name, severity, value, description):
        for s in self.stats:
            if s.name == name:
                s.value += value
                return
        self.stats.append(Stat(name, severity, value, description))

    def children(self) -> list:
        kids = [[] for _ in self.ops]
        for op in self.ops:
            if op.parent != NONE:
                kids[op.parent].append(op.id)
        return kids

    def to_dict(self) -> dict:
        """Plain data (JSON-ready); the shape the store writer binding takes."""
        rows = lambda xs: [dataclasses.asdict(x) for x in xs]
        return {
            "info": self.info, "config": self.config, "devices": self.devices,
            "ops": rows(self.ops), "tensors": rows(self.tensors), "frames": rows(self.frames),
            "stacks": rows(self.stacks), "ranges": rows(self.ranges), "stats": rows(self.stats),
        }
