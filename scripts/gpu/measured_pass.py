"""The measured pass on a GPU: its overhead, and a GPT-2 pair diffed with it.

    python measured_pass.py overhead WORKLOAD --out DIR [--rounds 5] [--seconds 1]
    python measured_pass.py pair VARIANT --out DIR [--seconds 4]
    python measured_pass.py syncs --out DIR
    python measured_pass.py truth --out DIR [--seconds 3] [--trials 2]

overhead: in one process, the workload's step run plain and in each of MODES
    (the measured pass, its CUPTI part alone, its samplers alone, CUPTI with
    every API call, torch.profiler) alternately, ROUNDS times each (the order
    reversed every other round), about SECONDS per run; then one run of the
    operator-level measured pass (ops=True) for reference, and a recording
    pass of one step (fingerprints). Per run: wall and CUDA-event time per
    step. Writes DIR/WORKLOAD-rec.mgt, DIR/WORKLOAD-m.mgt (the last measured
    pass) and DIR/WORKLOAD-overhead.json.
loop: the workload in LOOPS timed loops of about SECONDS, one LOOP_MS line
    each (to time it under `magneton record -- python ...`).
    Workloads: gpt2-1x64 (GPT-2 small, fp16, batch 1 x 64 tokens), gpt2-8x512
    (the same at 8 x 512) and mlp (24 Linear(1024, 1024) + ReLU, fp32, 64 rows).
pair: GPT-2 small (fp16, 8 x 512) with attn_implementation VARIANT (eager or
    sdpa), seed 0: warm-up, a recording pass of one forward, a measured pass of
    about SECONDS. Writes DIR/VARIANT.mgt and DIR/VARIANT-m.mgt.
    --measured-api: MAGNETON_TORCH_API for the measured pass alone; --traced-steps N:
    kernels traced in its first N forwards only.
syncs: what each API call selection records of a step's waits (a scalar
    read, a device synchronize, an event polled, a pageable copy): rows per
    step by table and name. Writes DIR/syncs.json.
truth: both variants in one process, windows of SECONDS alternated over TRIALS,
    energy from NVML's counter watched from outside the steps
    (cases/groundtruth.py): J and s per forward. Writes DIR/truth.json.
    --demo SIZE: the pair of `magneton demo` instead (GPT-2 blocks at SIZE,
    python/magneton/demo/gpt2_blocks.py; tiny under GPU_DRY).

GPU_DRY=1 runs the same on the CPU with tiny models (a check of this script).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "cases"))
import magneton  # noqa: E402

DRY = os.environ.get("GPU_DRY") == "1"
DEVICE = "cpu" if DRY else "cuda"


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def gpt2(batch: int, seq: int, attn: str = "sdpa"):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=2) if DRY else GPT2Config()
    model = GPT2LMHeadModel._from_config(cfg, attn_implementation=attn).to(DEVICE).eval()
    if not DRY:
        model = model.half()
    ids = torch.randint(0, cfg.vocab_size, (1, 16) if DRY else (batch, seq), device=DEVICE)

    def step():
        with torch.no_grad():
            return model(ids).logits
    return step


def mlp():
    torch.manual_seed(0)
    layers = []
    for _ in range(4 if DRY else 24):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(DEVICE).eval()
    x = torch.randn(64, 1024, device=DEVICE)

    def step():
        with torch.no_grad():
            return model(x)
    return step


def table_counts(path: Path) -> dict:
    """Rows per table of a run file, and its API calls by name (the file is SQLite)."""
    import sqlite3
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
           for t in ("ops", "kernels", "transfers", "api_calls", "ranges")}
    out["api_names"] = dict(db.execute("SELECT s.value, count(*) FROM api_calls a JOIN strings s ON s.id = a.name "
                                       "GROUP BY s.value").fetchall())
    out["stats"] = db.execute("SELECT name, value, description FROM stats").fetchall()
    db.close()
    return out


WORKLOADS = {"gpt2-1x64": lambda: gpt2(1, 64), "gpt2-8x512": lambda: gpt2(8, 512), "mlp": mlp}


def timed(step, n: int) -> dict:
    """n steps, queued without a sync per step: wall and CUDA-event time per step."""
    sync()
    if DEVICE == "cuda":
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    if DEVICE == "cuda":
        e1.record()
    sync()
    wall = time.perf_counter() - t0
    event = e0.elapsed_time(e1) / 1e3 if DEVICE == "cuda" else wall
    return {"n": n, "wall_ms": wall / n * 1e3, "event_ms": event / n * 1e3}


# The modes `overhead` alternates: what runs around the same steps.
MODES = {
    "plain": None,
    "measured": dict(energy="nvml"),                   # the default measured pass on a GPU (API rows: waits)
    "measured-launches": dict(energy="nvml", env="launches"),  # ...with a row per launch (the default before)
    "measured-none": dict(energy="nvml", env="none"),
    # ...tracing kernels in its first 20 steps only, then detached (record(traced_steps=...))
    "measured-untraced": dict(energy="nvml", traced_steps=20),  # ...with the API kinds off (waits from sync and copy records)
    # ...with the wait calls enabled one by one rather than the API kinds whole minus the rest
    "measured-include": dict(energy="nvml", env="waits", select="include"),
    "cupti": dict(energy="none"),                      # its CUPTI part alone
    "kernels-only": dict(energy="none", env="none"),   # CUPTI without API call rows: what the launch rows cost
    # Its samplers alone: ops=False too, or no kernel tracing means operators are recorded
    # (2026-12-05 the label "samplers" measured operator recording: +118-167%).
    "samplers": dict(energy="nvml", kernels=False, ops=False),
    "api-all": dict(energy="none", env="all"),         # CUPTI with every CUDA API call recorded
    "profiler": "profiler",                            # torch.profiler (Kineto, CUPTI too): a reference
}


def run_mode(mode: str, step, n: int, path: Path) -> dict:
    spec = MODES[mode]
    if spec is None:
        return timed(step, n)
    if spec == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA] if DEVICE == "cuda" else [ProfilerActivity.CPU]):
            return timed(step, n)
    options = {k: v for k, v in spec.items() if k not in ("env", "select")}
    if DRY:
        options["energy"] = "none"
    if "env" in spec:
        os.environ["MAGNETON_TORCH_API"] = spec["env"]
    if "select" in spec:
        os.environ["MAGNETON_CUPTI_SELECT"] = spec["select"]
    try:
        t0 = time.perf_counter()
        rec = magneton.record(str(path), overwrite=True, **options)
        rec.__enter__()
        t1 = time.perf_counter()

        def marked():  # with the step mark a measured loop writes (rec.step())
            step()
            rec.step()
        res = timed(marked, n)
        t2 = time.perf_counter()
        rec.__exit__(None, None, None)
        t3 = time.perf_counter()
    finally:
        os.environ.pop("MAGNETON_TORCH_API", None)
        os.environ.pop("MAGNETON_CUPTI_SELECT", None)
    if rec.untraced_from is not None:  # the steps after tracing stopped, at the program's own pace
        first, since = rec.untraced_from
        if n > first:
            res["untraced_ms"] = (t2 - since) / (n - first) * 1e3
            res["untraced_steps"] = n - first
    return dict(enter_s=t1 - t0, exit_s=t3 - t2, summary=rec.summary, **res)


def warmed(workload: str, seconds: float):
    """The workload's step after 20 warm-up steps, and how many steps take about `seconds`."""
    step = WORKLOADS[workload]()
    for _ in range(20):
        step()
    sync()
    probe = timed(step, 20)
    return step, max(20, int(seconds / max(probe["wall_ms"] * 1e-3, 1e-6)))


def overhead(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    step, n = warmed(args.workload, args.seconds)
    runs = [dict(mode="plain-before-cupti", round=0, **timed(step, n))]
    measured = out / f"{args.workload}-m.mgt"
    modes = [m for m in MODES if m in re.split("[,+]", args.modes)]
    for r in range(1, args.rounds + 1):
        order = modes if r % 2 else modes[::-1]  # each mode sees both neighbours
        for mode in order:
            path = measured if mode == "measured" else out / f"{args.workload}-{mode}.mgt"
            runs.append(dict(mode=mode, round=r, **run_mode(mode, step, n, path)))
    with magneton.record(str(out / f"{args.workload}-ops.mgt"), energy="none", ops=True, overwrite=True) as rec:
        res = timed(step, n)
    runs.append(dict(mode="ops", round=0, summary=rec.summary, **res))
    with magneton.record(str(out / f"{args.workload}-rec.mgt"), fingerprints=True, overwrite=True) as rec:
        step()
        sync()
    recording = rec.summary
    counts = {m: table_counts(out / f"{args.workload}-{m}.mgt") for m in ("m", *modes)
              if (out / f"{args.workload}-{m}.mgt").exists()}
    med = {m: statistics.median(x["wall_ms"] for x in runs if x["mode"] == m) for m in modes}
    best = {m: min(x["wall_ms"] for x in runs if x["mode"] == m) for m in modes}
    ev = {m: statistics.median(x["event_ms"] for x in runs if x["mode"] == m) for m in modes}
    # The untraced stretch of each measured run (traced_steps): the program at its own pace.
    untraced = {m: statistics.median(u) for m in modes
                if (u := [x["untraced_ms"] for x in runs if x["mode"] == m and "untraced_ms" in x])}
    report = {"workload": args.workload, "steps_per_run": n, "runs": runs, "recording_pass": recording,
              "median_wall_ms": med, "fastest_wall_ms": best, "median_event_ms": ev,
              "overhead_pct": {m: (med[m] / med["plain"] - 1) * 100 for m in modes},
              "fastest_overhead_pct": {m: (best[m] / best["plain"] - 1) * 100 for m in modes},
              "median_untraced_ms": untraced,
              "untraced_overhead_pct": {m: (u / med["plain"] - 1) * 100 for m, u in untraced.items()},
              "measured_run": counts.get("m", {}), "cupti_run": counts.get("cupti", {}),
              "api_all_run": counts.get("api-all", {}),
              "rows": {m: {k: c.get(k) for k in ("kernels", "transfers", "api_calls")} for m, c in counts.items()},
              "torch": torch.__version__,
              "gpu": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu"}
    (out / f"{args.workload}-overhead.json").write_text(json.dumps(report, indent=1, default=str))
    print(f"{args.workload}: {n} steps per run; median ms/step " +
          ", ".join(f"{m} {med[m]:.3f} ({report['overhead_pct'][m]:+.1f}%, fastest {report['fastest_overhead_pct'][m]:+.1f}%)"
                    for m in modes) +
          "".join(f"; {m} untraced steps {u:.3f} ({report['untraced_overhead_pct'][m]:+.1f}%)" for m, u in untraced.items()) +
          f"; ops mode {runs[-1]['wall_ms']:.3f}; measured pass rows: "
          f"{counts.get('m', {}).get('kernels')} kernels, {counts.get('m', {}).get('api_calls')} API calls")


def loop(args) -> None:
    """The workload's steps in LOOPS timed loops (for `magneton record -- python ...`): LOOP_MS lines.
    --record early|late: inside an in-process measured pass (no samplers) entered
    before the model touches CUDA, or after its warm-up."""
    import contextlib
    rec = magneton.record(f"/tmp/loop-{os.getpid()}.mgt", energy="none", overwrite=True) if args.record else None
    with rec if args.record == "early" else contextlib.nullcontext():
        step, n = warmed(args.workload, args.seconds)
        with rec if args.record == "late" else contextlib.nullcontext():
            for _ in range(args.loops):
                print(f"LOOP_MS {timed(step, n)['wall_ms']:.4f}", flush=True)


def pair(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    step = gpt2(8, 512, args.variant)
    for _ in range(5):
        step()
    sync()
    with magneton.record(str(out / f"{args.variant}.mgt"), fingerprints=True, overwrite=True):
        step()
        sync()
    n = max(20, int(args.seconds / max(timed(step, 10)["wall_ms"] * 1e-3, 1e-6)))
    if args.measured_api:
        os.environ["MAGNETON_TORCH_API"] = args.measured_api
    t0 = time.perf_counter()
    with magneton.record(str(out / f"{args.variant}-m.mgt"), energy="none" if DRY else "nvml",
                         overwrite=True, traced_steps=args.traced_steps or "auto") as rec:
        t1 = time.perf_counter()
        for _ in range(n):
            step()
            rec.step()
        sync()
        t2 = time.perf_counter()
    os.environ.pop("MAGNETON_TORCH_API", None)
    print(f"pair {args.variant}: measured loop {(t2 - t1) / n * 1e3:.3f} ms per forward (API rows: "
          f"{args.measured_api or 'default'}), plain {timed(step, n)['wall_ms']:.3f}")
    print(f"pair {args.variant}: recording pass and a measured pass of {n} forwards: {rec.summary}")


def syncs(args) -> None:
    """What a measured pass records of the host's waits, per API selection: a
    step with a scalar read (.item()), a device synchronize, a poll loop on an
    event and a pageable host-to-device copy; rows per step by table and name."""
    import sqlite3
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = mlp()
    host = torch.randn(256, 1024)

    def step():
        y = model()
        float(y.sum().item())
        sync()
        if DEVICE == "cuda":
            e = torch.cuda.Event()
            model()
            e.record()
            while not e.query():
                pass
        host.to(DEVICE)
    for _ in range(5):
        step()
    sync()
    n = 50
    report = {}
    for api, select in (("none", None), ("waits", None), ("waits", "include"), ("launches", None)):
        label = api + (f"-{select}" if select else "")
        os.environ["MAGNETON_TORCH_API"] = api
        if select:
            os.environ["MAGNETON_CUPTI_SELECT"] = select
        path = out / f"syncs-{label}.mgt"
        with magneton.record(str(path), energy="none", overwrite=True):
            for _ in range(n):
                step()
            sync()
        os.environ.pop("MAGNETON_TORCH_API", None)
        os.environ.pop("MAGNETON_CUPTI_SELECT", None)
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = {"transfers": dict(db.execute(
            "SELECT s.value || CASE t.synchronous WHEN 1 THEN ' sync' ELSE '' END, count(*) FROM transfers t "
            "JOIN strings s ON s.id = t.kind GROUP BY 1").fetchall()),
                "api_calls": dict(db.execute("SELECT s.value, sum(a.count) FROM api_calls a JOIN strings s "
                                             "ON s.id = a.name GROUP BY 1").fetchall())}
        db.close()
        report[label] = {t: {k: round(v / n, 2) for k, v in r.items()} for t, r in rows.items()}
        print(f"syncs {label}: per step {report[label]}")
    (out / "syncs.json").write_text(json.dumps(report, indent=1))


def truth(args) -> None:
    import groundtruth
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.demo:
        from magneton.demo import gpt2_blocks
        steps = {v: torch.no_grad()(gpt2_blocks.build(v, "tiny" if DRY else args.demo, DEVICE)[0])
                 for v in ("eager", "sdpa")}
    else:
        steps = {v: gpt2(8, 512, v) for v in ("eager", "sdpa")}
    watch = None if DRY else groundtruth.CounterWatch(groundtruth.Nvml(0))
    if watch:
        watch.__enter__()
    windows = []
    for v, s in steps.items():  # warm both
        for _ in range(10):
            s()
    sync()
    for trial in range(args.trials):
        for v in (("eager", "sdpa") if trial % 2 == 0 else ("sdpa", "eager")):
            s = steps[v]
            sync()
            t0 = time.monotonic_ns()
            n = 0
            while time.monotonic_ns() - t0 < args.seconds * 1e9:
                for _ in range(10):
                    s()
                n += 10
            sync()
            t1 = time.monotonic_ns()
            windows.append({"variant": v, "trial": trial, "iters": n, "t0_ns": t0, "t1_ns": t1})
    if watch:
        watch.__exit__(None, None, None)
    result = {}
    for v in ("eager", "sdpa"):
        ws = [w for w in windows if w["variant"] == v]
        s_per = [(w["t1_ns"] - w["t0_ns"]) / 1e9 / w["iters"] for w in ws]
        j_per = [watch.energy(w["t0_ns"], w["t1_ns"]) / w["iters"] for w in ws] if watch else []
        result[v] = {"s_per_iter": statistics.mean(s_per), "j_per_iter": statistics.mean(j_per) if j_per else None,
                     "windows": ws}
    if result["eager"]["j_per_iter"]:
        result["saving_pct"] = (1 - result["sdpa"]["j_per_iter"] / result["eager"]["j_per_iter"]) * 100
    (out / "truth.json").write_text(json.dumps(result, indent=1))
    print("truth:", {v: {k: result[v][k] for k in ("s_per_iter", "j_per_iter")} for v in ("eager", "sdpa")},
          "saving %:", result.get("saving_pct"))


def main() -> None:
    p = argparse.ArgumentParser(prog="measured_pass.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("workload", choices=sorted(WORKLOADS))
    o.add_argument("--out", required=True)
    o.add_argument("--rounds", type=int, default=6)
    o.add_argument("--seconds", type=float, default=0.5)
    o.add_argument("--modes", default=",".join(MODES))
    lp = sub.add_parser("loop")
    lp.add_argument("workload", choices=sorted(WORKLOADS))
    lp.add_argument("--loops", type=int, default=3)
    lp.add_argument("--seconds", type=float, default=0.5)
    lp.add_argument("--record", choices=("early", "late"))
    q = sub.add_parser("pair")
    q.add_argument("variant", choices=("eager", "sdpa"))
    q.add_argument("--out", required=True)
    q.add_argument("--seconds", type=float, default=4.0)  # 2 s traced ("auto"), the rest untraced
    q.add_argument("--measured-api", help="MAGNETON_TORCH_API for the measured pass only")
    q.add_argument("--traced-steps", type=int, help="trace kernels in the measured pass's first N forwards only")
    sy = sub.add_parser("syncs")
    sy.add_argument("--out", required=True)
    t = sub.add_parser("truth")
    t.add_argument("--out", required=True)
    t.add_argument("--seconds", type=float, default=3.0)
    t.add_argument("--trials", type=int, default=2)
    t.add_argument("--demo", help="the demo's pair at this size (gpt2_blocks.SIZES) instead of GPT-2 small")
    args = p.parse_args()
    {"overhead": overhead, "loop": loop, "pair": pair, "syncs": syncs, "truth": truth}[args.cmd](args)


if __name__ == "__main__":
    main()
