"""What every case program shares: its command line, seeding, the measured loop,
one recorded iteration, and turning outputs into arrays for comparison.

A case variant (cases/<case>/wasteful.py or efficient.py) is a module with

    FRAMEWORK = "torch" | "jax"
    def setup(device, small) -> state     # deterministic: seeded weights and inputs
    def step(state) -> outputs            # one iteration of the computation
    def configure(state) -> None          # optional: global flags this side runs under

and ends with `casekit.main(__name__)`. The same module is driven by the
command line (standalone, ground-truth windows, recording), by
groundtruth.py (both sides alternated in one process) and by the tests.

    python cases/hf-14450/wasteful.py --device cuda --iters 10
    python cases/hf-14450/wasteful.py --seconds 3          # one long window, JSON line
    python cases/hf-14450/wasteful.py --record w.mgt       # one iteration, recorded
    python cases/casekit.py pair hf-14450 --seconds 2 --trials 3   # both sides, alternated
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import math
import os
import resource
import sys
import time
import contextlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

CASES_DIR = Path(__file__).resolve().parent
SIDES = ("wasteful", "efficient")
# Lines meant for a harness start with this tag; everything else is the program's own output.
TAG = "MAGNETON_CASE "


# ----------------------------------------------------------------- run files

# Run files of several MB are committed packed (xz shrinks SQLite run files ~5x):
# `tar -C cases/<case>/runs -cJf runs.tar.xz *.mgt`, the .mgt files then deleted.
PACKED_RUNS = "runs.tar.xz"


def has_run_files(runs: Path) -> bool:
    return (runs / "wasteful.mgt").exists() or (runs / PACKED_RUNS).exists()


@contextmanager
def run_files(runs: Path):
    """The folder holding a case's .mgt files: runs/ itself, or, where they are packed,
    a temporary folder they are unpacked into for as long as the block runs."""
    packed = runs / PACKED_RUNS
    if (runs / "wasteful.mgt").exists() or not packed.exists():
        yield runs
        return
    import tarfile
    import tempfile
    with tempfile.TemporaryDirectory(prefix="magneton-case-") as tmp, tarfile.open(packed, "r:xz") as tar:
        tar.extractall(tmp, filter="data")
        yield Path(tmp)


# ----------------------------------------------------------------- loading

def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: cannot be loaded as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _module_name(case: str, stem: str) -> str:
    return "magneton_case_" + case.replace("-", "_") + "_" + stem


def sibling(file: str, stem: str):
    """The module <stem>.py next to `file` (case folders have dashes, so no packages)."""
    path = Path(file).resolve().parent / f"{stem}.py"
    name = _module_name(path.parent.name, stem)
    return sys.modules.get(name) or _load(path, name)


def load_variant(case: str, side: str):
    """cases/<case>/<side>.py as a module, without running its command line."""
    path = CASES_DIR / case / f"{side}.py"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such case variant")
    name = _module_name(case, side)
    return sys.modules.get(name) or _load(path, name)


def expected(case: str) -> dict:
    return json.loads((CASES_DIR / case / "expected.json").read_text())


def all_cases() -> list[str]:
    return sorted(p.parent.name for p in CASES_DIR.glob("*/expected.json"))


def harness_arguments(p: argparse.ArgumentParser) -> None:
    """The options groundtruth.py and run_all.py share."""
    p.add_argument("--cases", default="", help="comma-separated subset (default: all)")
    p.add_argument("--engine", default=os.environ.get("CASES_ENGINE", ""), help="compiled cublas-engine binary")
    p.add_argument("--budget", type=float, default=0,
                   help="seconds for the whole run; cases that would start after it are reported as not run")


def selected_cases(arg: str, prog: str) -> list[str]:
    """The cases named by --cases (all when empty); an unknown name is a usage error (exit 2)."""
    wanted = [c for c in arg.split(",") if c] or all_cases()
    unknown = sorted(set(wanted) - set(all_cases()))
    if unknown:
        print(f"{prog}: unknown case(s): {', '.join(unknown)}", file=sys.stderr)
        raise SystemExit(2)
    return wanted


# ----------------------------------------------------------------- seeding, devices

def seed(value: int = 0) -> None:
    """Seeds every generator a case may draw from; weights are drawn on the CPU so
    both sides and both devices start from the same numbers."""
    np.random.seed(value)
    try:
        import torch
        torch.manual_seed(value)
    except ImportError:
        pass


def default_device() -> str:
    try:
        import torch
        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def sync(module, outputs: Any = None) -> None:
    """Waits for the device to finish the work queued so far."""
    if getattr(module, "FRAMEWORK", "torch") == "jax":
        if outputs is not None:
            import jax
            jax.block_until_ready(outputs)
        return
    import torch
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


@contextmanager
def nvtx_range(name: str):
    """An NVTX range (seen by a CUPTI tracer) when torch with CUDA is importable."""
    try:
        import torch
        ok = torch.cuda.is_available()
    except ImportError:
        ok = False
    if ok:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if ok:
            torch.cuda.nvtx.range_pop()


def configure(module, state) -> None:
    hook = getattr(module, "configure", None)
    if hook is not None:
        hook(state)


# ----------------------------------------------------------------- outputs

def to_arrays(outputs: Any) -> list[np.ndarray]:
    """Flattens a step's outputs (tensors, jax arrays, tuples, dicts, scalars) to float64 arrays."""
    if isinstance(outputs, dict):
        return [a for k in sorted(outputs) for a in to_arrays(outputs[k])]
    if isinstance(outputs, (list, tuple)):
        return [a for o in outputs for a in to_arrays(o)]
    if hasattr(outputs, "detach"):  # torch.Tensor
        t = outputs.detach()
        if t.is_complex():
            t = t.abs()
        return [t.to("cpu").double().numpy()]
    arr = np.asarray(outputs)
    if np.iscomplexobj(arr):
        arr = np.abs(arr)
    return [arr.astype(np.float64)]


def max_relative_diff(a: Any, b: Any) -> float:
    """Largest |a-b| relative to the scale of a, over all outputs (inf on shape mismatch)."""
    worst = 0.0
    xs, ys = to_arrays(a), to_arrays(b)
    if len(xs) != len(ys):
        return float("inf")
    for x, y in zip(xs, ys):
        if x.shape != y.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(x))) if x.size else 0.0, 1e-30)
        worst = max(worst, float(np.max(np.abs(x - y))) / scale if x.size else 0.0)
    return worst


def outputs_close(a: Any, b: Any, rtol: float, atol: float) -> tuple[bool, float]:
    xs, ys = to_arrays(a), to_arrays(b)
    ok = len(xs) == len(ys) and all(
        x.shape == y.shape and np.allclose(x, y, rtol=rtol, atol=atol) for x, y in zip(xs, ys))
    return ok, max_relative_diff(a, b)


# ----------------------------------------------------------------- measured windows

def _cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rapl_joules() -> float | None:
    """Package energy from powercap (absent on VMs); machine-wide, not per process."""
    total, found = 0.0, False
    for zone in Path("/sys/class/powercap").glob("intel-rapl:[0-9]*"):
        if ":" in zone.name.split("intel-rapl:", 1)[1]:
            continue  # subzones are inside their package
        try:
            total += int((zone / "energy_uj").read_text()) / 1e6
            found = True
        except (OSError, ValueError):
            pass
    return total if found else None


def _sync_each_iteration(module) -> bool:
    # JAX frees a result's buffer only once its computation ran: queueing seconds of
    # iterations could hold many outputs at once. A variant may ask for the same pacing.
    return getattr(module, "FRAMEWORK", "torch") == "jax" or getattr(module, "SYNC_EACH_ITERATION", False)


def window(module, state, seconds: float, min_iters: int = 1) -> dict:
    """Runs step() back to back for `seconds` (at least min_iters), queued without a
    sync per iteration (JAX: one per iteration); the window closes after the device
    drained, so the energy between t0 and t1 is exactly the energy of `iters` iterations."""
    each = _sync_each_iteration(module)
    configure(module, state)
    sync(module)
    rapl0 = _rapl_joules()
    cpu0 = _cpu_seconds()
    t0 = time.monotonic_ns()
    iters, out = 0, None
    deadline = t0 + int(seconds * 1e9)
    while iters < min_iters or time.monotonic_ns() < deadline:
        out = module.step(state)
        iters += 1
        if each:
            sync(module, out)
    sync(module, out)
    t1 = time.monotonic_ns()
    cpu1 = _cpu_seconds()
    rapl1 = _rapl_joules()
    rec = {"iters": iters, "t0_ns": t0, "t1_ns": t1, "wall_s": (t1 - t0) / 1e9,
           "cpu_s": cpu1 - cpu0}
    if rapl0 is not None and rapl1 is not None:
        rec["rapl_j"] = rapl1 - rapl0
    return rec


def emit(record: dict) -> None:
    print(TAG + json.dumps(record), flush=True)


# ----------------------------------------------------------------- recording

def _accepted(fn, wanted: dict) -> dict:
    """The keyword arguments `fn` accepts (the recorder's options grow over time)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return wanted
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return wanted
    return {k: v for k, v in wanted.items() if k in params}


_MIN_MEASURED_STEPS = 3
# The diff compares energy only where the sensor moved often enough under the run (docs/diff.md);
# a measured pass asks for at least this many NVML energy-counter updates and at least a second.
MIN_SENSOR_UPDATES = 10
_MAX_MEASURED_ATTEMPTS = 3


def sensor_updates(path: str) -> int | None:
    """How often the energy counter moved during a recorded run: the fewest changes of any
    GPU's `energy.total` series (the store keeps only changes), of any device's where no GPU
    has one; None without one. A GPU run's energy is its GPUs': a platform or CPU counter
    that a virtual machine reads as constant must not make the pass ever longer."""
    import sqlite3
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT d.kind, count(*) FROM samples sa JOIN series se ON se.id = sa.series "
                          "JOIN strings st ON st.id = se.sensor LEFT JOIN devices d ON d.id = se.device "
                          "WHERE st.value = 'energy.total' GROUP BY sa.series").fetchall()
    counts = [n for kind, n in rows if kind == "gpu"] or [n for _, n in rows]
    return min(counts) - 1 if counts else None


def measured_steps(step_s: float, measured_s: float) -> int:
    """Steps in a measured pass: enough for `measured_s` seconds, at least 3. Nothing caps it by
    operators: a measured pass holds kernels, not operators (JAX's holds its equations)."""
    return max(_MIN_MEASURED_STEPS, math.ceil(measured_s / max(step_s, 1e-6)))


def measured_pass(record_once, step_s: float, measured_s: float, energy: str, path: str) -> int:
    """Records the measured pass (record_once(steps)) for at least `measured_s` seconds, and again
    longer while the energy counter moved fewer than MIN_SENSOR_UPDATES times under it (its
    update period varies with the board and the load). Returns the steps of the kept pass."""
    steps = measured_steps(step_s, measured_s)
    for attempt in range(_MAX_MEASURED_ATTEMPTS):
        t0 = time.monotonic()
        record_once(steps)
        updates = sensor_updates(path) if energy != "none" else None
        print(f"casekit: measured pass of {steps} steps in {time.monotonic() - t0:.1f} s, "
              f"{updates} energy counter updates", file=sys.stderr, flush=True)
        if updates is None or updates >= MIN_SENSOR_UPDATES or attempt == _MAX_MEASURED_ATTEMPTS - 1:
            break
        steps = math.ceil(steps * 1.25 * MIN_SENSOR_UPDATES / max(updates, 1))
    return steps


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def record_iteration(module, state, path: str, energy: str, replay: bool, measured: str | None = None,
                     measured_s: float = 1.0) -> dict:
    """One iteration recorded by Magneton (imported here so the programs run without it):
    magneton.record around step() for PyTorch (the recording pass: values, operators with
    their call stacks, kernels linked to them), record_jax on the jitted program for JAX.
    With `measured`: also a measured pass there, the program as it runs (for PyTorch on a GPU:
    kernels, copies, syncs and launch calls from CUPTI plus the samplers, nothing per
    operator), repeating the step for at least `measured_s` seconds and MIN_SENSOR_UPDATES
    energy readings (measured_pass); `magneton diff --measured-a` costs the regions from it
    (docs/diff.md "Recording what to diff")."""
    try:
        import magneton
    except ImportError as e:
        raise SystemExit(f"--record: the magneton package is not importable ({e}); "
                         "set PYTHONPATH to the project's python/ folder")
    options = {"fingerprints": True, "energy": energy, "overwrite": True}
    if replay:
        options["replay"] = True
    configure(module, state)
    t0 = time.monotonic_ns()
    info = {"record": path}
    if getattr(module, "FRAMEWORK", "torch") == "jax":
        import jax
        from magneton.jax_recorder import record_jax
        fn, fn_args = module.program(state)
        used = _accepted(record_jax, options)
        record_jax(fn, *fn_args, path=path, **used)  # compiles and warms up before its measured pass
        if measured:
            jitted = jax.jit(fn)
            jax.block_until_ready(jitted(*fn_args))  # compiled outside the timing
            step_s = _timed(lambda: jax.block_until_ready(jitted(*fn_args)))
            # On a GPU the measured pass is the program's own calls (measured=n, after two op-level
            # executions the diff leaves out: the file holds both passes), paced as window() paces
            # the ground truth; without a kernel trace the calls are skipped and the op-level
            # executions are the measurement.
            gpu = jax.default_backend() == "gpu"
            reps = measured_pass(lambda n: record_jax(fn, *fn_args, path=measured, energy=energy, fingerprints=False,
                                                      repeat=2 if gpu else n, measured=n if gpu else 0,
                                                      wait_each=_sync_each_iteration(module), overwrite=True),
                                 step_s, measured_s, energy, measured)
            info.update(measured=measured, measured_reps=reps)
    else:
        used = _accepted(magneton.record, options)
        out = module.step(state)  # warm: handles, autotuning and allocator outside the record
        sync(module, out)
        with magneton.record(path, **used):
            with nvtx_range("magneton.case/measured"):
                out = module.step(state)
                sync(module, out)
        if measured:
            def once(steps: int) -> None:
                # No per-operator work (ops and their stacks are the recording pass's). As
                # docs/diff.md asks, rec.step() after each step: kernels are traced for the
                # first `steps` (the regions' time and energy), and on a GPU the same count
                # runs untraced after them (the step as the program runs, without the tracer's
                # delay; on a CPU operators are the measurement and nothing is untraced).
                import torch
                untraced = steps if torch.cuda.is_available() and torch.cuda.is_initialized() else 0
                with magneton.record(measured, energy=energy, stacks=False, overwrite=True,
                                     traced_steps=steps) as rec:
                    last = None
                    for _ in range(steps + untraced):
                        with nvtx_range("magneton.case/measured"):
                            last = module.step(state)
                        rec.step()
                    sync(module, last)

            step_s = _timed(lambda: sync(module, module.step(state)))  # a warm step sets the count
            info.update(measured=measured, measured_reps=measured_pass(once, step_s, measured_s, energy, measured))
    if measured:
        info["measured_sensor_updates"] = sensor_updates(measured) if energy != "none" else None
    info.update(wall_s=(time.monotonic_ns() - t0) / 1e9, recorder_options=sorted(used),
                replay_unsupported=bool(replay and "replay" not in used))
    return info


# ----------------------------------------------------------------- command line

def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="One side of a Magneton case.")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None,
                   help="default: cuda when available")
    p.add_argument("--small", action="store_true", help="tiny shapes (tests on a CPU)")
    p.add_argument("--iters", type=int, default=1, help="timed iterations after warm-up")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--seconds", type=float, default=None,
                   help="ground truth: run back to back for S seconds, print one window line")
    p.add_argument("--record", metavar="PATH", default=None,
                   help="record one iteration with magneton.record(PATH, fingerprints=True)")
    p.add_argument("--measured", metavar="PATH", default=None,
                   help="with --record: also a measured pass there (fingerprints off, repeated steps)")
    p.add_argument("--measured-seconds", type=float, default=1.0,
                   help="the measured pass's least length (default 1 s; longer until NVML's energy "
                        f"counter moved {MIN_SENSOR_UPDATES} times)")
    p.add_argument("--energy", choices=("nvml", "none", "auto"), default=None,
                   help="recorder energy source (default on cuda: the case's record_energy, else nvml; "
                        "none on cpu)")
    p.add_argument("--replay", action="store_true",
                   help="ask the recorder to replay operators for energy, where it supports it")
    p.add_argument("--save", metavar="FILE.npz", default=None, help="save the last outputs")
    return p


def _prepare_device(module, device: str) -> None:
    if getattr(module, "FRAMEWORK", "torch") == "jax":
        # Leave GPU memory to other frameworks in the same process; pick the platform.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        os.environ.setdefault("JAX_PLATFORMS", "cuda" if device == "cuda" else "cpu")


def main(module_name: str) -> None:
    module = sys.modules[module_name]
    path = Path(module.__file__).resolve()
    case, side = path.parent.name, path.stem
    args = _parser(f"{case}/{path.name}").parse_args()
    device = args.device or default_device()
    _prepare_device(module, device)
    state = module.setup(device, args.small)
    info = {"case": case, "side": side, "device": device, "small": args.small}
    if args.record:
        # A case judged on CPU-side evidence records procfs CPU time too ("auto").
        energy = args.energy or (expected(case).get("record_energy", "nvml") if device == "cuda" else "none")
        info.update(record_iteration(module, state, args.record, energy, args.replay, args.measured,
                                     args.measured_seconds))
        emit(info)
        return
    configure(module, state)
    out = None
    for _ in range(args.warmup):
        out = module.step(state)
    sync(module, out)
    if args.seconds is not None:
        info.update(window(module, state, args.seconds))
    else:
        t0 = time.perf_counter()
        for _ in range(args.iters):
            out = module.step(state)
        sync(module, out)
        info.update(iters=args.iters, wall_s=time.perf_counter() - t0)
        if args.save:
            np.savez(args.save, *to_arrays(out))
    info["s_per_iter"] = info["wall_s"] / max(info["iters"], 1)
    emit(info)


# ----------------------------------------------------------------- both sides in one process

def pair(case: str, device: str, seconds: float, trials: int, small: bool, warm_s: float) -> None:
    """Ground-truth windows for both sides of a case, alternated in one process
    (ABBAAB...), so model construction and imports are paid once. Prints one tagged
    JSON line per window; the harness that watches the energy counter pairs them."""
    exp = expected(case)
    if exp.get("program") == "cuda-binary":
        raise SystemExit(f"{case}: a compiled program; groundtruth.py runs it directly")
    mods = {s: load_variant(case, s) for s in SIDES}
    for m in mods.values():
        _prepare_device(m, device)
    states = {s: mods[s].setup(device, small) for s in SIDES}
    outs = {}
    for s in SIDES:
        configure(mods[s], states[s])
        outs[s] = mods[s].step(states[s])
        sync(mods[s], outs[s])
    tol = exp.get("gpu_tolerance" if device == "cuda" else "cpu_tolerance", {})
    ok, rel = outputs_close(outs["wasteful"], outs["efficient"],
                            tol.get("rtol", 1e-3), tol.get("atol", 1e-5))
    emit({"case": case, "event": "outputs", "agree": ok, "max_rel_diff": rel})
    for s in SIDES:  # warm both sides and the clocks before the measured windows
        window(mods[s], states[s], warm_s)
    for trial in range(trials):
        order = SIDES if trial % 2 == 0 else SIDES[::-1]
        for s in order:
            rec = window(mods[s], states[s], seconds)
            emit({"case": case, "event": "window", "side": s, "trial": trial, **rec})


def _pair_main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="casekit.py pair")
    p.add_argument("case")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--warm", type=float, default=0.5, help="seconds of warm-up per side")
    p.add_argument("--small", action="store_true")
    a = p.parse_args(argv)
    pair(a.case, a.device or default_device(), a.seconds, a.trials, a.small, a.warm)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "pair":
        _pair_main(sys.argv[2:])
    else:
        raise SystemExit("usage: casekit.py pair CASE [--seconds S] [--trials N] [--device cuda|cpu]")
