"""Ground truth for the case suite: what each side of a case really costs on this GPU.

For every case, both sides run alone in back-to-back loops of several seconds,
alternated over trials (A B, B A, A B, ...), while this process watches NVML's total
energy counter from outside the workload. The counter moves about every 100 ms, so a
window's energy is read by interpolating between the counter's change points at the
window's edges (CLOCK_MONOTONIC on both sides). Per case: J/iteration and s/iteration of
each side, their ratio and spread, the CPU time of the process (for the cases whose
waste is on the host), and which side truly wastes.

    python cases/groundtruth.py --out OUT [--seconds 2] [--trials 3] [--cases a,b]
    python cases/groundtruth.py --device cpu --small      # harness check without a GPU

Exit codes: 0 ok, 1 some case failed to run, 2 bad usage or no energy counter.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import json
import platform
import statistics
import subprocess
import tempfile
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import casekit  # noqa: E402

NVML_SUCCESS = 0


class Nvml:
    """The few NVML entry points the harness needs, loaded at run time (no nvml.h here)."""

    def __init__(self, index: int):
        try:
            self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as e:
            raise RuntimeError(f"libnvidia-ml.so.1: cannot be loaded ({e})")
        self._check(self.lib.nvmlInit_v2(), "nvmlInit_v2")
        self.handle = ctypes.c_void_p()
        self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.handle)),
                    f"nvmlDeviceGetHandleByIndex_v2({index})")
        name = ctypes.create_string_buffer(96)
        self._check(self.lib.nvmlDeviceGetName(self.handle, name, 96), "nvmlDeviceGetName")
        self.name = name.value.decode()
        self.energy_j()  # fails early where the board has no energy counter

    def _check(self, rc: int, what: str) -> None:
        if rc != NVML_SUCCESS:
            self.lib.nvmlErrorString.restype = ctypes.c_char_p
            raise RuntimeError(f"{what}: {self.lib.nvmlErrorString(rc).decode()}")

    def energy_j(self) -> float:
        mj = ctypes.c_ulonglong()
        self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(mj)),
                    "nvmlDeviceGetTotalEnergyConsumption")
        return mj.value / 1000.0


class CounterWatch:
    """Polls the energy counter in a thread and keeps its change points, so the energy
    of any window [t0, t1] inside the watch can be read afterwards."""

    def __init__(self, nvml: Nvml):
        self.nvml = nvml
        self.points: list[tuple[int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = None
        while not self._stop.is_set():
            a = time.monotonic_ns()
            value = self.nvml.energy_j()
            b = time.monotonic_ns()
            if value != last:
                self.points.append(((a + b) // 2, value))
                last = value

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        time.sleep(0.3)  # one more counter update after the last window
        self._stop.set()
        self._thread.join()

    def energy(self, t0: int, t1: int) -> float | None:
        e0, e1 = self._at(t0), self._at(t1)
        return None if e0 is None or e1 is None else e1 - e0

    def _at(self, t: int) -> float | None:
        pts = self.points
        for (ta, ea), (tb, eb) in zip(pts, pts[1:]):
            if ta <= t <= tb:
                return ea + (eb - ea) * (t - ta) / (tb - ta)
        return None


def _tagged(stdout: str) -> list[dict]:
    return [json.loads(line[len(casekit.TAG):]) for line in stdout.splitlines()
            if line.startswith(casekit.TAG)]


# time.monotonic() by which every command must have ended (--budget); None: no budget.
DEADLINE: float | None = None


def _run(cmd: list[str], timeout: float, env: dict | None = None) -> tuple[list[dict], str]:
    """Runs a command; returns its tagged records and, on failure, the error's last lines."""
    if DEADLINE is not None:
        timeout = max(5.0, min(timeout, DEADLINE - time.monotonic()))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return [], f"timed out after {timeout:.0f} s"
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return _tagged(p.stdout), f"exit {p.returncode}: " + " | ".join(tail)
    return _tagged(p.stdout), ""


def python_windows(case: str, args) -> tuple[list[dict], str]:
    cmd = [sys.executable, str(HERE / "casekit.py"), "pair", case, "--device", args.device,
           "--seconds", str(args.seconds), "--trials", str(args.trials), "--warm", str(args.warm)]
    if args.small:
        cmd.append("--small")
    return _run(cmd, args.timeout)


def engine_windows(args) -> tuple[list[dict], str]:
    """The compiled engine: one process per window (it starts in well under a second)."""
    if not args.engine or not Path(args.engine).exists():
        return [], f"engine binary not found ({args.engine or 'pass --engine'})"
    records, sums = [], {}
    for side, compute in (("wasteful", "fp32"), ("efficient", "tf32")):
        out = Path(tempfile.gettempdir()) / f"magneton-case-engine-{compute}.json"
        recs, err = _run([args.engine, "--compute", compute, "--iters", "1", "--checksum", str(out)], 60)
        if err:
            return [], err
        sums[side] = json.loads(out.read_text())
    agree, rel = casekit.outputs_close([sums["wasteful"]["sum"], sums["wasteful"]["sumsq"]],
                                       [sums["efficient"]["sum"], sums["efficient"]["sumsq"]], 2e-2, 1e-3)
    records.append({"event": "outputs", "agree": agree, "max_rel_diff": rel})
    for trial in range(args.trials):
        order = (("wasteful", "fp32"), ("efficient", "tf32"))
        for side, compute in (order if trial % 2 == 0 else order[::-1]):
            recs, err = _run([args.engine, "--compute", compute, "--seconds", str(args.seconds),
                              "--warmup", "3"], args.seconds + 60)
            if err or not recs:
                return records, err or "no window record"
            records.append({**recs[-1], "event": "window", "trial": trial})
    return records, ""


def _cv(xs: list[float]) -> float:
    return statistics.pstdev(xs) / statistics.mean(xs) if len(xs) > 1 and statistics.mean(xs) else 0.0


def summarize(records: list[dict], watch: CounterWatch | None, exp: dict) -> dict:
    """Per side: J/iter, s/iter, CPU s/iter over trials; the per-trial ratio; the truth."""
    sides: dict[str, dict[str, list[float]]] = {s: {"j": [], "s": [], "cpu": [], "w": []} for s in casekit.SIDES}
    outputs = next((r for r in records if r.get("event") == "outputs"), {})
    for r in records:
        if r.get("event") != "window":
            continue
        d = sides[r["side"]]
        n = r["iters"]
        d["s"].append(r["wall_s"] / n)
        d["cpu"].append(r["cpu_s"] / n)
        joules = watch.energy(r["t0_ns"], r["t1_ns"]) if watch else None
        if joules is not None:
            d["j"].append(joules / n)
            d["w"].append(joules / r["wall_s"])
    res = {"outputs_agree": outputs.get("agree"), "max_rel_diff": outputs.get("max_rel_diff")}
    for s, d in sides.items():
        res[s] = {
            "j_per_iter": statistics.mean(d["j"]) if d["j"] else None,
            "s_per_iter": statistics.mean(d["s"]) if d["s"] else None,
            "cpu_s_per_iter": statistics.mean(d["cpu"]) if d["cpu"] else None,
            "watts": statistics.mean(d["w"]) if d["w"] else None,
            "cv_j": _cv(d["j"]), "cv_s": _cv(d["s"]), "trials": len(d["s"]),
            "j_trials": d["j"], "s_trials": d["s"], "cpu_trials": d["cpu"],
        }
    metric = exp.get("ground_truth_metric", "gpu_energy")
    key = {"gpu_energy": "j_trials", "cpu_time": "cpu_trials"}[metric]
    w, e = res["wasteful"][key], res["efficient"][key]
    if not (w and e):  # no energy measured (CPU run): time stands in
        key, metric = "s_trials", "time"
        w, e = res["wasteful"][key], res["efficient"][key]
    ratios = [a / b for a, b in zip(w, e) if b]
    res["metric"] = metric
    res["ratio"] = statistics.mean(ratios) if ratios else None
    res["ratio_cv"] = _cv(ratios)
    for m, k in (("energy_ratio", "j_trials"), ("time_ratio", "s_trials"), ("cpu_ratio", "cpu_trials")):
        pairs = [a / b for a, b in zip(res["wasteful"][k], res["efficient"][k]) if b]
        res[m] = statistics.mean(pairs) if pairs else None
    res["truth"] = truth(res["ratio"], res["ratio_cv"])
    res["expected_waste_side"] = exp["expected_waste_side"]
    return res


def truth(ratio: float | None, cv: float) -> str | None:
    """Which side wastes: a 5% margin, widened to three times the trial-to-trial spread."""
    if ratio is None:
        return None
    margin = max(0.05, 3 * cv)
    if ratio >= 1 + margin:
        return "wasteful"
    if ratio <= 1 / (1 + margin):
        return "efficient"
    return "none"


def _fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_table(results: dict) -> None:
    print(f"\n{'case':16} {'side':9} {'J/iter':>9} {'ms/iter':>9} {'W':>6} {'CPU ms/it':>9} {'CV(J)':>6}")
    for case, r in results.items():
        if "error" in r or "skipped" in r:
            print(f"{case:16} {'FAILED: ' + r['error'] if 'error' in r else 'skipped: ' + r['skipped']}")
            continue
        for s in casekit.SIDES:
            d = r[s]
            print(f"{case if s == 'wasteful' else '':16} {s:9} {_fmt(d['j_per_iter'], '9.4f')} "
                  f"{_fmt(d['s_per_iter'] and d['s_per_iter'] * 1e3, '9.3f')} {_fmt(d['watts'], '6.0f')} "
                  f"{_fmt(d['cpu_s_per_iter'] and d['cpu_s_per_iter'] * 1e3, '9.2f')} {_fmt(d['cv_j'] * 100, '5.1f')}%")
        verdict = {"wasteful": "wasteful side wastes", "efficient": "efficient side wastes (reversed)",
                   "none": "no difference beyond noise", None: "not measured"}[r["truth"]]
        mark = "as expected" if r["truth"] == r["expected_waste_side"] else f"expected {r['expected_waste_side']}"
        print(f"{'':16} ratio {_fmt(r['ratio'], '.3f')} on {r['metric']} (spread {r['ratio_cv'] * 100:.1f}%): "
              f"{verdict}; {mark}; outputs agree: {r['outputs_agree']} "
              f"(max rel diff {_fmt(r['max_rel_diff'], '.2g')})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=2.0, help="window length per side and trial")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--warm", type=float, default=0.5, help="warm-up seconds per side before the trials")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--gpu-index", type=int, default=0, help="NVML index of the measured GPU")
    p.add_argument("--small", action="store_true", help="tiny shapes (harness check)")
    p.add_argument("--timeout", type=float, default=240, help="seconds allowed per case")
    p.add_argument("--out", default="", help="folder for groundtruth.json")
    casekit.harness_arguments(p)
    args = p.parse_args()
    wanted = casekit.selected_cases(args.cases, "groundtruth")
    nvml = None
    if args.device == "cuda":
        try:
            nvml = Nvml(args.gpu_index)
        except RuntimeError as e:
            print(f"groundtruth: no GPU energy counter: {e}", file=sys.stderr)
            return 2
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)

    doc = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "host": platform.node(),
           "gpu": nvml.name if nvml else None, "device": args.device, "seconds": args.seconds,
           "trials": args.trials, "small": args.small, "cases": {}}
    if nvml:  # static power, for reading the totals
        with CounterWatch(nvml) as idle:
            t0 = time.monotonic_ns()
            time.sleep(1.5)
            t1 = time.monotonic_ns()
        e = idle.energy(t0 + 200_000_000, t1)
        doc["idle_watts"] = e / ((t1 - t0 - 200_000_000) / 1e9) if e is not None else None

    failed = 0
    begun = time.monotonic()
    global DEADLINE
    DEADLINE = begun + args.budget if args.budget else None
    for case in wanted:
        exp = casekit.expected(case)
        if args.device == "cpu" and exp.get("gpu_only"):
            doc["cases"][case] = {"skipped": exp["gpu_only_reason"]}
            continue
        if exp["program"] == "distributed":
            doc["cases"][case] = {"skipped": exp["distributed_reason"]}
            continue
        started = time.monotonic()
        # A case takes its windows plus start-up; do not start one that cannot finish.
        need = 2 * args.trials * args.seconds + 2 * args.warm + 15
        if args.budget and started - begun + need > args.budget:
            doc["cases"][case] = {"error": f"not run: the {args.budget:.0f} s budget was spent"}
            failed += 1
            continue
        print(f"groundtruth: {case} ...", file=sys.stderr, flush=True)
        watch = CounterWatch(nvml) if nvml else None
        with (watch or contextlib.nullcontext()):
            if exp["program"] == "cuda-binary":
                records, err = engine_windows(args)
            else:
                records, err = python_windows(case, args)
        if err:
            failed += 1
            doc["cases"][case] = {"error": err}
        else:
            doc["cases"][case] = summarize(records, watch, exp)
        doc["cases"][case]["elapsed_s"] = round(time.monotonic() - started, 1)
        if args.out:  # keep what is done even if a later case hangs the machine
            (Path(args.out) / "groundtruth.json").write_text(json.dumps(doc, indent=1))
    print_table(doc["cases"])
    if doc.get("idle_watts"):
        print(f"\nidle board power: {doc['idle_watts']:.0f} W ({doc['gpu']}); energies are totals (static + dynamic)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
