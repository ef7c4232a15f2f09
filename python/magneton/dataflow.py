"""Checks on the dataflow graph of a recorded run (a dict from load_run).

An op input is *connected* when some op produced that tensor, or when it is
a *graph input*: a value no recorded op had written, i.e. its storage was
never the output of an op that ended before this op started (parameters,
user inputs, fresh buffers). An input on storage that a recorded op had
written, yet matching no produced value, is a missed edge."""

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
        for t in op["outputs"]:
            produced.add(t)
            writes[tensors[t]["storage"]].append(op["end_ns"])
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
