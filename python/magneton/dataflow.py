"""Checks on the dataflow graph of a recorded run (a dict from load_run).

An op input is *connected* when some op produced that tensor, or when it is
a *graph input*: a value no recorded op had written, i.e. no op that ended
before this op started wrote its storage (parameters, user inputs, fresh
buffers). An op writes a storage when it outputs a tensor on it that is not
a view of one of its inputs: a storage none of its inputs has, or a version
above the inputs' (an in-place write bumps it; views made inside a kernel
start a fresh counter at 0). An input on storage
that a recorded op had written, yet matching no produced value, is a missed
edge. (The recorder links such inputs to the storage's last writer and counts
them as `aliased_inputs`; this check sees them as produced.)"""

from __future__ import annotations

import bisect
from collections import defaultdict

__all__ = ["completeness"]


def completeness(run: dict, prefix: str = "aten::") -> dict:
    """Share of ops (names starting with `prefix`) whose tensor inputs are all
    connected. Returns {"ops", "complete", "fraction", "disconnected": [(op id, name, tensor id)]}."""
    ops, tensors = run["ops"], run["tensors"]
    produced = set()
    writes = defaultdict(list)  # storage -> sorted end times of ops that wrote it
    for op in ops:
        read = {}
        for t in op["inputs"]:
            s = tensors[t]["storage"]
            read[s] = max(read.get(s, -1), tensors[t]["version"])
        for t in op["outputs"]:
            produced.add(t)
            s = tensors[t]["storage"]
            if s not in read or tensors[t]["version"] > read[s]:
                writes[s].append(op["end_ns"])
    for times in writes.values():
        times.sort()

    def connected(op, t):
        if t in produced:
            return True
        times = writes.get(tensors[t]["storage"], [])
        return bisect.bisect_right(times, op["start_ns"]) == 0  # nothing wrote it before

    counted = complete = 0
    disconnected = []
    for op in ops:
        if not op["name"].startswith(prefix):
            continue
        counted += 1
        bad = [t for t in op["inputs"] if not connected(op, t)]
        if bad:
            disconnected.append((op["id"], op["name"], bad[0]))
        else:
            complete += 1
    return {"ops": counted, "complete": complete, "fraction": complete / counted if counted else 1.0,
            "disconnected": disconnected}
