"""Operator replay (docs/energy.md, "Replay"): per-operator energy for operators
far shorter than the energy sensor's ~100 ms update period.

Two ways in:

    # 1. with the recording: replay every distinct operator key after the block
    with magneton.record("run.mgt", fingerprints=True, replay=True):
        model(x)

    # 2. later, on a recorded run: re-run the workload once to capture the
    #    inputs of the operators a diff flagged, replay them, append to run.mgt
    magneton.replay("run.mgt", model, x, diff="diff.json", side="a", budget_s=120)

A capture pass keeps each selected operator's inputs (cloned, on their device)
keyed by operator, shapes, dtypes, strides, scalar arguments and device (the
first call of each key). The replay re-invokes each key through the dispatcher
in windows of >= 0.5 s and >= 5 sensor updates, synchronizing the device at the
window edges (inside a CUDA graph where capture works), until the windows' CV
is <= 2% or a budget runs out, the costliest recorded calls first. Operators
that launch no device work (views, empty, ...: an empty CUDA graph) are timed
on the host only (status "host"). Results go into the run file's replays
table; `magneton diff` and `magneton top` use them and say so.

The module is `magneton.op_replay`; `magneton.replay` is the function below.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Iterable, Optional, Union

__all__ = ["replay", "ReplayOptions", "DEFAULTS", "selection_from_diff", "op_signature", "format_table"]

# Options of a replay (docs/energy.md, "Replay"); any of them can be passed as a keyword.
DEFAULTS = {
    "window_s": 0.5,         # shortest measurement window
    "min_updates": 5,        # ... and at least this many sensor updates per window
    "target_rse": 0.01,      # stop once the mean's relative standard error (CV / sqrt(windows)) is at most this
    "min_repeats": 3,        # windows before the CV is judged
    "max_repeats": 20,       # then status "noisy"
    "host_window_s": 0.05,   # windows of ops with no device work (status "host"): host time only
    "op_budget_s": 10.0,     # per operator key
    "budget_s": 300.0,       # all keys together
    "idle_s": 0.6,           # quiet window for idle power before the replay (0: none)
    "energy": "auto",        # "auto", "nvml", "rapl", "none"
    "fingerprint_rtol": 1e-3,  # replayed outputs vs the recorded fingerprints
    "progress": True,        # progress lines on stderr
    "cuda_graphs": True,     # replay CUDA operators inside a CUDA graph where capture works
    "graph_calls": 8,        # calls per captured graph
}

ReplayOptions = dict


def op_signature(run: dict, op: dict) -> str:
    """The operator signature replays are keyed by, name(dtype[shape],...) over
    the op's input tensors; defined once, in C++ (src/core/op_signature.h)."""
    from magneton.recorder import extension

    return extension().op_signature(run, op)


def selection_from_diff(diff: Union[str, dict], side: str, verdicts: Iterable[str] = ("waste",)) -> list:
    """Operator names of the regions a `magneton diff --json` report flagged,
    on `side` ("a" or "b"): the top-level operators of every region of a
    finding whose verdict is in `verdicts`."""
    if side not in ("a", "b"):
        raise ValueError(f"side={side!r}: expected 'a' or 'b'")
    if isinstance(diff, str):
        with open(diff) as f:
            diff = json.load(f)
    flagged = {i for i, f in enumerate(diff.get("findings", [])) if f.get("verdict") in set(verdicts)}
    names = set()
    for r in diff.get("regions", []):
        if r.get("finding") in flagged:
            names.update(r.get(f"ops_{side}", []))
    return sorted(names)


def _selection(ops, run: Optional[dict]) -> dict:
    """ops: "all", or a list of op ids (of `run`), operator names ("aten::addmm")
    and signatures ("aten::addmm(float32[8],...)")."""
    if ops == "all" or ops is True:
        return {"all": True}
    if isinstance(ops, (str, int)):
        ops = [ops]
    signatures, names = [], []
    for o in ops:
        if isinstance(o, int):
            if run is None:
                raise ValueError("op ids need a recorded run to name them")
            if not 0 <= o < len(run["ops"]):
                raise ValueError(f"op id {o}: the run has {len(run['ops'])} ops")
            signatures.append(op_signature(run, run["ops"][o]))
        elif "(" in o:
            signatures.append(o.split(" strides ")[0])  # a full replay key works too
        else:
            names.append(o)
    return {"all": False, "signatures": signatures, "names": names, "top_level_only": bool(names)}


# What torch warns when a captured CUDA graph has no nodes (aten/src/ATen/cuda/CUDAGraph.cpp).
_EMPTY_GRAPH_WARNING = "The CUDA Graph is empty"


def _captures_nothing(capture_graph) -> bool:
    """Runs `capture_graph()` (a torch.cuda.graph capture) and says whether torch
    warned that the graph is empty: the op launched no device work. That
    warning is expected here and not shown; any other warning goes on."""
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            capture_graph()
    finally:  # the others go on even when the capture failed
        for w in caught:
            if _EMPTY_GRAPH_WARNING not in str(w.message):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return any(_EMPTY_GRAPH_WARNING in str(w.message) for w in caught)


def _no_device_work(n: int) -> int:
    """The runner of an op with no device work: -1 tells the C++ loop to time
    it on the host only (status "host")."""
    return -1


def _graph_runners(capture, entries: list, options: dict, stats: list):
    """A factory of CUDA graph runners for the C++ replay loop, or None."""
    torch = sys.modules.get("torch")
    if not options.get("cuda_graphs") or torch is None or not torch.cuda.is_available():
        return None
    k = max(1, int(options.get("graph_calls", 8)))

    def make(i: int):
        e = entries[i]
        if not e["device"].startswith("cuda") or e["random"]:
            return None
        try:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                capture.call(i, 3)  # warm-up off the default stream, as torch.cuda.graph wants
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()

            def capture_graph():
                with torch.cuda.graph(graph):
                    capture.call(i, k)

            if _captures_nothing(capture_graph):
                return _no_device_work
        except Exception as ex:  # noqa: BLE001 - capture is optional: plain launches instead
            stats.append({"name": "replay_cuda_graph_capture", "severity": "info", "value": 1,
                          "description": f"{e['name']}: {str(ex).splitlines()[0] if str(ex) else type(ex).__name__}"})
            return None

        def run(n: int) -> int:
            reps = max(1, n // k)
            for _ in range(reps):
                graph.replay()
            return reps * k

        run.graph = graph  # keeps the graph (and its memory pool) alive with the runner
        return run

    return make


class _Capture:
    """The capture pass: a RecordFunction callback keeping selected ops' inputs."""

    def __init__(self, ext, selection: dict):
        self.native = ext.ReplayCapture(**selection)

    def stop(self):
        self.native.stop()


def _run_and_store(path: str, capture, options: dict, run: Optional[dict] = None, ext=None) -> dict:
    """Replays every captured entry and appends the measurements to `path`."""
    from magneton.recorder import extension, load_run

    ext = ext or extension()
    opts = dict(DEFAULTS)
    opts.update(options)
    entries = capture.entries()
    extra_stats: list = []
    runners = _graph_runners(capture, entries, opts, extra_stats)
    report = capture.replay({k: v for k, v in opts.items() if k not in ("cuda_graphs", "graph_calls")}, runners)
    run = run if run is not None else load_run(path)
    ops = run["ops"]
    gpu_ids = {d["ordinal"]: d["id"] for d in run["devices"] if d["kind"] == "gpu"}
    by_signature: dict = {}
    for op in ops:
        by_signature.setdefault(op_signature(run, op), []).append(op)
    rows, unmatched = [], 0
    for e, r in zip(entries, report["results"]):
        r = dict(r)
        r.update(name=e["name"], signature=e["signature"], random=e["random"], in_place=e["in_place"],
                 recorded_s=e["recorded_s"], unsupported=e["unsupported"])
        o = e["ordinal"]
        if not (0 <= o < len(ops) and op_signature(run, ops[o]) == e["signature"]):
            same = by_signature.get(e["signature"], [])
            top = [x for x in same if x["parent"] < 0]
            o = (top or same)[0]["id"] if same else -1
        if o < 0:
            unmatched += 1
            r["op"] = None
            rows.append(r)
            continue
        r["op"] = o
        r["device"] = gpu_ids.get(r["device"], r["device"]) if r["device"] >= 0 else -1
        rows.append(r)
    stored = [r for r in rows if r["op"] is not None]
    if stored:
        ext.append_replays(path, stored)
    stats = list(report["stats"]) + extra_stats
    if unmatched:
        stats.append({"name": "replay_unmatched", "severity": "info", "value": unmatched,
                      "description": "replayed keys with no op of the same signature in the run (not stored)"})
    return {"path": path, "results": rows, "stats": stats, "idle_watts": report["idle_watts"],
            "energy_reason": report["energy_reason"], "stored": len(stored)}


def replay(path: str, fn, *args, ops=None, diff: Union[str, dict, None] = None, side: Optional[str] = None,
           **options) -> dict:
    """Replays operators of the recorded run `path` and appends the measurements to it.

    Runs `fn(*args)` once with a capture callback (no recording) that keeps the
    inputs of the selected operators, replays them and stores one replay row per
    distinct key whose signature matches an op of the run.

    Selection (the default is the operators of regions a diff flagged):
      diff: a `magneton diff --json` report (path or dict) and side: "a" or "b",
        this run's side in it: the top-level operators of its waste findings;
      ops: "all" (every distinct key), or a list of op ids of this run, operator
        names or signatures (a replay key works too).
    options: see DEFAULTS (budget_s, op_budget_s, target_rse, window_s, energy, ...).
    Returns {path, results, stats, idle_watts, energy_reason, stored}; `results`
    holds one dict per key: op, key, calls, repeats, seconds_per_call,
    joules_per_call (None without an energy sensor), idle_watts, cv, status
    ("ok", "host", "budget", "noisy", "mismatch", "unsupported", "error"),
    energy_source. "host": no device work, timed on the host; its
    joules_per_call is idle_watts x seconds_per_call (None without idle power).
    """
    from magneton.recorder import extension, load_run

    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"replay: unknown options {sorted(unknown)}")
    ext = extension()
    run = load_run(path)
    if ops is None:
        if diff is None:
            raise ValueError("replay: pass diff= (with side=) for the flagged regions, or ops='all' or a list")
        if side is None:
            raise ValueError("replay: diff= needs side='a' or 'b' (this run's side in the diff)")
        ops = selection_from_diff(diff, side)
        if not ops:
            return {"path": path, "results": [], "stats": [], "idle_watts": {}, "energy_reason": "",
                    "stored": 0}
    capture = _Capture(ext, _selection(ops, run))
    try:
        fn(*args)
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
    finally:
        capture.stop()
    return _run_and_store(path, capture.native, options, run=run, ext=ext)


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def format_table(result: dict) -> str:
    """One line per replayed key: op, calls/window, s/call, J/call total and
    above idle, CV, status (what scripts/gpu/replay.sh prints)."""
    lines = [f"{'operator':<34} {'calls/win':>9} {'s/call':>10} {'J/call':>10} {'J>idle':>10} "
             f"{'idle W':>7} {'CV%':>6} status"]
    for r in result["results"]:
        j = r.get("joules_per_call")
        above = None if j is None else j - r["idle_watts"] * r["seconds_per_call"]
        lines.append(f"{r.get('name', r['key'])[:34]:<34} {r['calls']:>9} {r['seconds_per_call']:>10.3e} "
                     f"{_fmt(j, '10.3e'):>10} {_fmt(above, '10.3e'):>10} {r['idle_watts']:>7.1f} "
                     f"{100 * r['cv']:>6.2f} {r['status']}{' (graph)' if r.get('cuda_graph') else ''}")
    if result.get("energy_reason"):
        lines.append(f"energy unavailable: {result['energy_reason']} (time per call only)")
    return "\n".join(lines)
