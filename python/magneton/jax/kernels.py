"""Links the kernels of a compiled XLA executable to the equations they compute.

During the measured pass a jit equation runs as one executable and all its
kernels carry the jit op's id (the CUPTI external correlation id). To give
each kernel to an equation, the executable's optimized HLO is read:

- XLA names a generated kernel after the HLO instruction it implements (a
  fusion "loop_add_fusion.2" launches kernel "loop_add_fusion_2"); library
  kernels (cuBLAS, cuDNN) come from custom-call instructions, in schedule order.
- Each HLO instruction carries metadata: the jaxpr primitive it was lowered
  from (op_name ".../dot_general") and the user source line. A fusion is
  attributed to the equation of its root instruction; repeated (primitive,
  line) keys, such as one layer function called per layer, are taken in
  program order.

A kernel whose instruction cannot be found stays with its jit op. The split is
exact for unfused instructions; a fusion computing several equations counts
wholly for its root equation (docs/jax.md).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Optional

from magneton.jax.graph import NONE, Graph

_COMP = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s+\(.*\)\s*->\s*.*\{\s*$")
_INSTR = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_OPNAME = re.compile(r'op_name="([^"]*)"')
_SRC_LINE = re.compile(r"source_line=(\d+)")
_SRC_FILE = re.compile(r'source_file="([^"]*)"')
_FRAME_ID = re.compile(r"stack_frame_id=(\d+)")
_CALLS = re.compile(r"(?:calls|body|condition|to_apply|branch_computations)=\{?([%\w.\-, ]+)\}?")
# Instructions that launch nothing on their own.
_NO_KERNEL = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all",
              "opt-barrier", "partition-id", "replica-id", "add-dependency", "domain"}
_LIBRARY = {"custom-call", "convolution", "dot", "fft", "triangular-solve", "cholesky"}


@dataclass
class Instruction:
    name: str
    opcode: str
    op_name: str = ""
    file: str = ""
    line: int = 0
    calls: list = field(default_factory=list)
    root: bool = False

    @property
    def primitive(self) -> str:
        return self.op_name.rsplit("/", 1)[-1] if self.op_name else ""


def sanitize(name: str) -> str:
    """An HLO instruction name as a kernel (LLVM function) name."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _split_type(rest: str) -> str:
    """Drops the result type in front of the opcode; tuple types hold spaces."""
    rest = rest.lstrip()
    if rest.startswith("("):
        depth = 0
        for i, c in enumerate(rest):
            depth += c == "("
            depth -= c == ")"
            if depth == 0:
                return rest[i + 1:].lstrip()
    return rest.split(" ", 1)[1] if " " in rest else rest


def parse_hlo(text: str) -> tuple:
    """(computations, entry) from HloModule text: computations maps a name to
    its instructions in order (the schedule, for a scheduled module)."""
    comps, entry, current = {}, None, None
    files, locations, frames = {}, {}, {}
    section = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = line
            continue
        if section and line and line[0].isdigit():
            key, _, value = line.partition(" ")
            if section == "FileNames":
                files[int(key)] = value.strip('"')
            elif section == "FileLocations":
                f = re.search(r"file_name_id=(\d+)", value)
                ln = re.search(r"\bline=(\d+)", value)
                locations[int(key)] = (files.get(int(f.group(1)), "") if f else "", int(ln.group(1)) if ln else 0)
            elif section == "StackFrames":
                loc = re.search(r"file_location_id=(\d+)", value)
                frames[int(key)] = int(loc.group(1)) if loc else 0
            continue
        section = None
        m = _COMP.match(line)
        if m:
            current = m.group(2)
            comps[current] = []
            if m.group(1):
                entry = current
            continue
        if line.strip() == "}":
            current = None
            continue
        m = _INSTR.match(line)
        if current is None or not m:
            continue
        body = _split_type(m.group(3))
        opcode = body.split("(", 1)[0].strip()
        ins = Instruction(name=m.group(2), opcode=opcode, root=bool(m.group(1)))
        meta = body[body.find("metadata={"):] if "metadata={" in body else ""
        if meta:
            ins.op_name = (_OPNAME.search(meta) or [None, ""])[1]
            src = _SRC_LINE.search(meta)
            if src:
                ins.line = int(src.group(1))
                ins.file = (_SRC_FILE.search(meta) or [None, ""])[1]
            fid = _FRAME_ID.search(meta)
            if fid:
                ins.file, ins.line = locations.get(frames.get(int(fid.group(1)), -1), ("", 0))
        for c in _CALLS.finditer(body.split("metadata={", 1)[0]):
            ins.calls += [x.strip().lstrip("%") for x in c.group(1).split(",") if x.strip()]
        comps[current].append(ins)
    return comps, entry


@dataclass
class Thunk:
    name: str           # the instruction, sanitized as a kernel name
    op: int             # the equation op it computes, or NONE
    library: bool       # launches library kernels (cuBLAS/cuDNN), not a kernel named after it


def plan(hlo_text: str, g: Graph, scope_op: int) -> list:
    """The thunks of an executable in schedule order, each with the op (a
    descendant of `scope_op`) it is attributed to."""
    comps, entry = parse_hlo(hlo_text)
    if entry is None:
        return []
    # Equations under the scope by (primitive, file, line), in program order.
    by_key: dict = {}
    kids = g.children()
    stack = [scope_op]
    leaves = []
    while stack:
        o = stack.pop()
        if kids[o]:
            stack.extend(reversed(kids[o]))
        elif o != scope_op:
            leaves.append(o)
    for o in sorted(leaves):
        op = g.ops[o]
        frame = g.frames[g.stacks[op.stack].frames[0]] if op.stack != NONE else None
        prim = op.name.split(":", 1)[1].split("(", 1)[0]
        by_key.setdefault((prim, frame.file if frame else "", frame.line if frame else 0), []).append(o)
        by_key.setdefault((prim, "", 0), []).append(o)  # for instructions without a source line
    taken: dict = {}

    def equation_of(ins: Instruction) -> int:
        key = (ins.primitive, ins.file, ins.line) if ins.line else (ins.primitive, "", 0)
        ops = by_key.get(key) or by_key.get((ins.primitive, "", 0))
        if not ops:
            return NONE
        k = taken.get(key, 0)
        taken[key] = k + 1
        return ops[min(k, len(ops) - 1)]

    thunks: list = []

    def visit(comp_name: str):
        for ins in comps.get(comp_name, []):
            if ins.opcode in _NO_KERNEL:
                continue
            if ins.opcode == "fusion" and ins.calls:
                fused = comps.get(ins.calls[0], [])
                # The root first: a fusion is attributed to the value it produces.
                order = sorted(fused, key=lambda i: not i.root)
                op = next((o for o in (equation_of(i) for i in order if i.op_name) if o != NONE), NONE)
                thunks.append(Thunk(sanitize(ins.name), op, library=False))
            elif ins.opcode in ("while", "conditional", "call", "async-start"):
                for c in ins.calls:
                    visit(c)
            else:
                thunks.append(Thunk(sanitize(ins.name), equation_of(ins) if ins.op_name else NONE,
                                    library=ins.opcode in _LIBRARY))
    visit(entry)
    return thunks


# Library calls launch helper kernels next to their main one: cuDNN fills a
# workspace before a convolution, cuBLAS reduces split-K partial sums after a
# GEMM. A helper belongs to the call of the main kernel it precedes or follows,
# so it must not move the walk on to the next library call.
_BEFORE_MAIN = re.compile(r"init_device_workspace|workspace_init|memset|zero_?fill", re.IGNORECASE)
_AFTER_MAIN = re.compile(r"splitKreduce|split_k_reduce|reduce_kernel|_cleanup", re.IGNORECASE)


def link(kernels: list, plans: dict) -> list:
    """New op per kernel (in the order given): kernels launched under a planned
    scope op go to the equation their thunk computes; others keep their op.
    plans: op id the kernels carry -> list of Thunk."""
    out = [k["op"] for k in kernels]
    groups: dict = {}
    for i, k in enumerate(kernels):
        if k["op"] in plans:
            groups.setdefault(k["op"], []).append(i)
    for scope, idx in groups.items():
        thunks = plans[scope]
        by_name = {t.name: p for p, t in enumerate(thunks)}
        library = [p for p, t in enumerate(thunks) if t.library]
        pos, waiting = -1, []  # waiting: helpers before the next main library kernel

        def assign(i, p):
            if thunks[p].op != NONE:
                out[i] = thunks[p].op

        def next_library_call():  # in schedule order, after the current one
            return next((q for q in library if q > pos), library[-1])

        for i in sorted(idx, key=lambda i: (kernels[i]["start_ns"], i)):
            name = kernels[i]["name"]
            p = _thunk_of(name, by_name)
            if p is None and library:  # a library kernel
                if _BEFORE_MAIN.search(name):
                    waiting.append(i)
                    continue
                if _AFTER_MAIN.search(name) and pos in library:
                    p = pos
                else:
                    p = next_library_call()
                for w in waiting:
                    assign(w, p)
                waiting = []
            if p is None:
                continue
            pos = p
            assign(i, p)
        if waiting:  # helpers with no main kernel after them
            p = next_library_call()
            for w in waiting:
                assign(w, p)
    return out


def in_windows(kernels: list, windows: dict) -> list:
    """Per kernel, its op; a kernel with none (-1) gets the op whose time
    window (op id -> (start_ns, end_ns)) holds the kernel's start."""
    spans = sorted((s, e, op) for op, (s, e) in windows.items())
    starts = [s for s, _, _ in spans]
    out = []
    for k in kernels:
        op = k["op"]
        if op == NONE:
            i = bisect.bisect_right(starts, k["start_ns"]) - 1
            if i >= 0 and k["start_ns"] <= spans[i][1]:
                op = spans[i][2]
        out.append(op)
    return out


def _thunk_of(kernel: str, by_name: dict) -> Optional[int]:
    if kernel in by_name:
        return by_name[kernel]
    # Kernels of one thunk may carry a suffix ("_impl", "_1" for a split reduction).
    best = None
    for name, p in by_name.items():
        if kernel.startswith(name + "_") and (best is None or len(name) > len(best[0])):
            best = (name, p)
    return best[1] if best else None
