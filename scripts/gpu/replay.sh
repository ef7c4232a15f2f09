#!/usr/bin/env bash
# Operator replay on the GPU machine (issue 8), in one device call:
#  1. builds magneton (CLI) and magneton._torch in build-gpu;
#  2. records one GPT-2 block forward (768 wide, fp32, random
#     weights) on CUDA with fingerprints and replay=True: every distinct
#     operator key is replayed through the dispatcher in windows of >= 5 NVML
#     updates (inside a CUDA graph where capture works), until CV <= 2% or the
#     budget runs out; results are appended to the run file;
#  3. repeatability: the same replay 5 times for the ops >= 10 us (CV over the
#     5 repeats of J/call), and additivity: the sum of replayed J/call over one
#     forward (top-level ops) against the forward's energy over a >= 10 s loop;
#  4. prints a table: op, calls/window, s/call, J/call total and above idle,
#     CV, status; then `magneton top --by op` of the run.
# Files back in $OUT: build.log, replay.log, replay.txt, block.mgt.
# Budget: ~6 minutes (REPLAY_BUDGET_S, default 240 s of replay) + the build.
# GPU_DRY=1: the same steps on a CPU machine (a 64-wide block on the CPU,
# energy none, 0.02 s windows, REPLAY_BUDGET_S default 30, 1 s loop), to try
# this script off the GPU machine (about a minute on 2 cores). With NO_BUILD=1
# it builds nothing and MAGNETON_BIN names the magneton command (default
# build-gpu/magneton):
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/dry-replay scripts/gpu/replay.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/replay-out}
mkdir -p "$OUT"
export REPLAY_DRY=${GPU_DRY:-0}
if [ "$REPLAY_DRY" = 1 ]; then export REPLAY_BUDGET_S=${REPLAY_BUDGET_S:-30}; fi
M=${MAGNETON_BIN:-build-gpu/magneton}
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }

step "checking the machine"
cuda="assert torch.cuda.is_available()"
[ "$REPLAY_DRY" = 1 ] && cuda=""
python3 -c "import torch, transformers, pybind11; $cuda" 2>/dev/null \
  || { echo "replay.sh: needs python3 with torch (CUDA), transformers, pybind11" | tee "$OUT/build.log"; exit 2; }
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu')"

if [ "${NO_BUILD:-0}" != 1 ]; then
  step "building magneton and magneton._torch (build-gpu)"
  : > "$OUT/build.log"
  gpu_build magneton magneton_torch >> "$OUT/build.log" 2>&1 || echo "replay.sh: build failed (build.log)"
  tail -n 3 "$OUT/build.log"
fi
export PYTHONPATH=$PWD/python
python3 -c "import torch, magneton._torch as m; m.ReplayCapture" 2>>"$OUT/build.log" \
  || { echo "replay.sh: magneton._torch with replay did not build or import (build.log)"; exit 1; }

script=$(mktemp /tmp/replay.XXXX.py)
cat > "$script" <<'PY'
import os, statistics, sys, time
import torch, transformers, magneton
import magneton.op_replay as rp  # the module: magneton.replay is the function
transformers.logging.set_verbosity_error()
out = sys.argv[1]
budget = float(os.environ.get("REPLAY_BUDGET_S", "240"))
dry = os.environ.get("REPLAY_DRY") == "1"
dev, energy, loop_s = ("cpu", "none", 1.0) if dry else ("cuda", "nvml", 10.0)
sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
torch.manual_seed(0)
if dry:
    cfg = transformers.GPT2Config(n_layer=1, n_embd=64, n_head=4, n_positions=64)
    x = torch.randn(2, 32, 64, device=dev)
else:
    cfg = transformers.GPT2Config(n_layer=1, n_embd=768, n_head=12, n_positions=1024)
    x = torch.randn(8, 512, 768, device=dev)
block = transformers.models.gpt2.modeling_gpt2.GPT2Block(cfg).to(dev).eval()
short = {"window_s": 0.02, "idle_s": 0.0} if dry else {}  # dry: every key in a few seconds
with torch.no_grad():
    for _ in range(3):
        block(x)  # warm: cuBLAS handles, allocator
    sync()
    path = os.path.join(out, "block.mgt")
    opts = {"budget_s": budget * 0.6, "op_budget_s": 15.0, "energy": energy, **short}
    with magneton.record(path, fingerprints=True, energy=energy, overwrite=True, replay=opts) as rec:
        block(x)
    res = rec.replay_result
    print(rp.format_table(res))
    print("idle W:", res["idle_watts"], " energy:", res["energy_reason"] or "measured")
    for s in res["stats"]:
        print(f"stat {s['name']}: {s['value']} ({s['description']})")

    # (a) repeatability: 5 more replays of the ops >= 10 us, CV of J/call over them.
    long_ops = [r["signature"] for r in res["results"] if r["status"] == "ok" and r["seconds_per_call"] >= 1e-5]
    per_key = {}
    if long_ops:
        for i in range(5):
            again = rp.replay(path, block, x, ops=long_ops[:6], budget_s=budget * 0.08, op_budget_s=6.0,
                              energy=energy, progress=False, **dict({"idle_s": 0.3}, **short))
            for r in again["results"]:
                if r["joules_per_call"] is not None:
                    per_key.setdefault(r["name"] + " " + r["signature"][len(r["name"]):][:40], []).append(r["joules_per_call"])
    print("\n(a) repeatability over 5 replays (J/call)")
    for k, v in per_key.items():
        cv = statistics.stdev(v) / statistics.mean(v) * 100 if len(v) > 1 else float("nan")
        print(f"  {k:<60} mean {statistics.mean(v):.3e} J  CV {cv:.2f}%  (n={len(v)})")

    # (b) additivity: replayed J of one forward's top-level ops vs a >= 10 s loop.
    # "host" rows (no device work) count: idle power over their time.
    run = magneton.load_run(path)
    by_sig = {r["signature"]: r for r in res["results"] if r["status"] in ("ok", "host")}
    top = [op for op in run["ops"] if op["parent"] < 0]
    covered = [by_sig.get(rp.op_signature(run, op)) for op in top]
    replay_s = sum(r["seconds_per_call"] for r in covered if r)
    replay_j = sum(r["joules_per_call"] for r in covered if r and r["joules_per_call"] is not None)
    with magneton.Monitor(gpus=[0]) as m:
        with m.window("loop") as w:
            n, t0 = 0, time.monotonic()
            while time.monotonic() - t0 < loop_s:
                block(x); n += 1
            sync()
            loop_s = time.monotonic() - t0
    loop_j = (w.measurement.energy_j or {}).get("gpu0")
    print("\n(b) additivity")
    print(f"  top-level ops replayed: {sum(1 for r in covered if r)}/{len(top)}")
    print(f"  replay sum {replay_s * 1e3:.3f} ms/forward vs loop {loop_s / n * 1e3:.3f} ms/forward")
    if loop_j:
        per_fwd = loop_j / n
        print(f"  replay sum {replay_j:.4f} J/forward vs loop {per_fwd:.4f} J/forward over {n} forwards: "
              f"{(replay_j / per_fwd - 1) * 100:+.1f}%")
    else:
        print("  loop energy unavailable:", w.measurement.reason)

# (c) the paper's Table 4 operators: replayed average power next to what plain
# sampling reports for one execution inside the program (the power reading a
# sampler holds while the op runs: the first reading stamped at or after its
# start, since NVML's value only changes every ~100 ms).
def table4(n, xt, w):
    r = torch.arange(n, device=dev)
    c = xt.t().contiguous()
    return r, c, torch.nn.functional.linear(c, w)

n4 = 1 << (14 if dry else 27)
d4 = 64 if dry else 8192
xt = torch.randn(d4, d4, device=dev)
w4 = torch.randn(d4, d4, device=dev)
names4 = ["aten::arange", "aten::contiguous", "aten::linear"]
with torch.no_grad():
    table4(n4, xt, w4); sync()
    p4 = os.path.join(out, "table4.mgt")
    with magneton.record(p4, fingerprints=True, energy=energy, overwrite=True,
                         replay={"ops": names4, "budget_s": budget * 0.25, "op_budget_s": 12.0,
                                 "energy": energy, **short}) as rec4:
        table4(n4, xt, w4)
    res4 = rec4.replay_result
    plain = {}
    with magneton.Monitor(gpus=[0]) as m:
        fns = {"aten::arange": lambda: torch.arange(n4, device=dev),
               "aten::contiguous": lambda: xt.t().contiguous(),
               "aten::linear": lambda: torch.nn.functional.linear(xt, w4)}
        spans = {}
        for name, f in fns.items():
            time.sleep(0.3); sync()
            t0 = magneton.clock_ns(); f(); sync(); spans[name] = (t0, magneton.clock_ns())
        time.sleep(0.3)
        inst = [s for s in m.series() if s["sensor"] == "power.instant"]
        for name, (t0, t1) in spans.items():
            after = [v for t, v in zip(inst[0]["t_ns"], inst[0]["value"]) if t >= t0] if inst else []
            plain[name] = (after[0] if after else None, (t1 - t0) * 1e-9)
print("\n(c) Table 4 operators: replayed vs plainly sampled average power")
print(f"  {'operator':<18} {'replay s/call':>13} {'replay W':>9} {'above idle W':>12} {'sampled W':>10} {'one call s':>10} status")
for name in names4:
    rows = [r for r in res4["results"] if r.get("name") == name]
    if not rows:
        print(f"  {name:<18} not replayed"); continue
    r = rows[0]
    j, s = r["joules_per_call"], r["seconds_per_call"]
    wr = j / s if j is not None and s > 0 else None
    sw, one = plain.get(name, (None, float("nan")))
    fmt = lambda v, f: "n/a" if v is None else format(v, f)
    print(f"  {name:<18} {s:>13.3e} {fmt(wr, '9.1f'):>9} {fmt(None if wr is None else wr - r['idle_watts'], '12.1f'):>12} "
          f"{fmt(sw, '10.1f'):>10} {one:>10.2e} {r['status']}")
PY
step "record + replay (budget ${REPLAY_BUDGET_S:-240} s)"
timeout 480 python3 "$script" "$OUT" 2>"$OUT/replay.log" | tee "$OUT/replay.txt"
echo "exit $?"
tail -n 5 "$OUT/replay.log"
step "magneton top"
"$M" top "$OUT/block.mgt" --by op 2>&1 | head -30 | tee -a "$OUT/replay.txt"
step "done"
