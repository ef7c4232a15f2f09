#!/usr/bin/env bash
# The torch recorder on the GPU machine (issue 5), in one device call:
#  1. builds magneton._torch (with the in-process CUPTI tracer) in build-gpu
#     against this machine's torch;
#  2. records a GPT-2 (12 layers, 768 wide, random weights) forward on the GPU:
#     the recording pass (fingerprints) and the measured pass (kernels), each in
#     its own process; checks dataflow completeness and kernels linked to ops;
#  3. measures recording overhead with fingerprints off against a plain run,
#     both in one process per configuration (ops only; ops + CUPTI kernels;
#     ops + kernels + NVML samplers),
#     at a launch-bound and a GPU-bound size;
#  4. prints a table. Files back in $OUT: build.log, torch.log, summary.txt.
# Well under 5 minutes on the H200 (the build is most of it).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/torch-out}
mkdir -p "$OUT"
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }

step "checking the machine"
missing=""
python3 -c "import torch, transformers, pybind11" 2>/dev/null || missing+=" python3(torch/transformers/pybind11)"
python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || missing+=" cuda-device"
for h in eigen3/Eigen/Core nlohmann/json.hpp fmt/core.h CLI/CLI.hpp; do
  [ -e /usr/include/$h ] || [ -e /tmp/gpudeps/usr/include/$h ] || missing+=" $h"
done
if [ -n "$missing" ]; then echo "torch.sh: missing on this machine:$missing" | tee "$OUT/build.log"; exit 2; fi
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"

# NO_BUILD=1: use the magneton package already on PYTHONPATH (scripts/gpu/capture.sh
# passes a prebuilt one) and skip the crash diagnosis, which capture.sh runs itself.
# TORCH_SH_PHASES: which passes to run (default: all four).
if [ "${NO_BUILD:-0}" != 1 ]; then
step "building magneton._torch (build-gpu)"
: > "$OUT/build.log"
if cmake -S . -B build-gpu -G Ninja $GPU_CMAKE_ARGS >> "$OUT/build.log" 2>&1; then
  ninja -C build-gpu -j16 magneton_torch >> "$OUT/build.log" 2>&1 || echo "torch.sh: build failed (tail of build.log below)"
else
  echo "torch.sh: cmake configure failed (tail of build.log below)"
fi
grep -q MAGNETON_HAVE_CUPTI_TRACER build-gpu/build.ninja 2>/dev/null && tracer=yes || tracer=no
echo "CUPTI tracer in the extension: $tracer" | tee -a "$OUT/build.log"
tail -n 3 "$OUT/build.log"
export PYTHONPATH=$PWD/python
if ! python3 -c "import torch, magneton._torch" 2>>"$OUT/build.log"; then
  echo "torch.sh: magneton._torch did not build or import (build.log)"; exit 1
fi
fi

bench=$(mktemp /tmp/torch-bench.XXXX.py)
runs=$(mktemp -d /tmp/torch-runs.XXXX)
cat > "$bench" <<'PY'
import json, os, statistics, sys, time
import torch, transformers, magneton
from magneton.dataflow import completeness
transformers.logging.set_verbosity_error()
phase, runs = sys.argv[1], sys.argv[2]
# TORCH_SH_DRY=1: a tiny model on the CPU, to try this script off the GPU machine.
dry = os.environ.get("TORCH_SH_DRY") == "1"
dev = "cpu" if dry else "cuda"
sizes = ((1, 8), (2, 16)) if dry else ((1, 64), (8, 512))

def gpt2():
    torch.manual_seed(0)
    cfg = (transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=50257) if dry
           else transformers.GPT2Config(n_layer=12, n_embd=768, n_head=12))  # GPT-2 small, random weights
    return transformers.GPT2LMHeadModel(cfg).to(dev).eval()

def ids(batch, seq):
    return torch.randint(0, 50257, (batch, seq), device=dev)

def sync():
    if dev == "cuda": torch.cuda.synchronize()

def sync_time(f):
    sync(); t = time.perf_counter(); f(); sync()
    return time.perf_counter() - t

def report(name, path, rec, wall):
    run = magneton.load_run(path)
    c = completeness(run)
    ks = run["kernels"]
    linked = sum(k["op"] >= 0 for k in ks)
    fps = sum(t["fingerprint"] is not None for t in run["tensors"])
    print("ROW " + json.dumps({"pass": name, "ops": len(run["ops"]), "aten_connected": round(100 * c["fraction"], 2),
          "tensors": len(run["tensors"]), "fingerprints": fps, "fp_failures": rec.summary["fingerprint_failures"],
          "kernels": len(ks), "linked_pct": round(100 * linked / len(ks), 2) if ks else None,
          "by_corr": rec.summary["kernels_by_correlation"], "by_time": rec.summary["kernels_by_time"],
          "aliased": rec.summary["aliased_inputs"], "wall_s": round(wall, 2)}))
    if c["disconnected"]:
        print("disconnected (first 5):", c["disconnected"][:5])
    for s in run["stats"]:
        print(f"  stat {s['name']}={s['value']}: {s['description'][:100]}")

if phase in ("values", "measured"):
    model, x = gpt2(), ids(4, 256)
    with torch.no_grad():
        model(x); sync()
        path = f"{runs}/gpt2_{phase}.mgt"
        t = time.perf_counter()
        with magneton.record(path, overwrite=True, fingerprints=phase == "values") as rec:
            model(x)
        report(phase, path, rec, time.perf_counter() - t)
elif phase.startswith("overhead"):
    kernels = phase in ("overhead-kernels", "overhead-energy")
    energy = "nvml" if phase == "overhead-energy" else "none"  # samplers inside this process
    model = gpt2()
    for batch, seq in sizes:
        x = ids(batch, seq)
        f = lambda: model(x)
        with torch.no_grad():
            for _ in range(5): f()
            plain = [sync_time(f) for _ in range(30)]
            with magneton.record(f"{runs}/ovh.mgt", overwrite=True, kernels=kernels, stacks=True, energy=energy):
                for _ in range(3): f()
                rec = [sync_time(f) for _ in range(30)]
            plain += [sync_time(f) for _ in range(30)]
        p, r = statistics.median(plain), statistics.median(rec)
        print("OVH " + json.dumps({"config": phase.replace("overhead-", ""), "size": f"{batch}x{seq}",
              "plain_ms": round(1e3 * p, 3), "recorded_ms": round(1e3 * r, 3),
              "overhead_pct": round(100 * (r / p - 1), 1)}))
PY

# Crash diagnosis, smallest step first, each in its own process: unbuffered
# output and faulthandler tracebacks (on SIGSEGV too) land in torch.log, and
# the first step that fails names where it breaks. MAGNETON_TORCH_KERNELS=0
# repeats the CUDA record without the CUPTI tracer.
export PYTHONFAULTHANDLER=1
py() { timeout "$1" python3 -X faulthandler -u "${@:2}"; }
: > "$OUT/torch.log"
if [ "${NO_BUILD:-0}" != 1 ]; then
step "diagnosis: import, CPU record, CUDA record (each its own process)"
diag() {  # name, timeout, env assignments..., python code
  local name=$1 limit=$2; shift 2
  echo "-- diag $name" >> "$OUT/torch.log"
  env "${@:1:$#-1}" timeout "$limit" python3 -X faulthandler -u -c "${@: -1}" >> "$OUT/torch.log" 2>&1
  local rc=$?
  printf 'DIAG %-28s exit %s\n' "$name" "$rc" | tee -a "$OUT/torch.log"
}
diag import 60 X=1 'import magneton; print("import magneton ok"); import torch; print("torch ok"); import magneton._torch; print("import magneton._torch ok")'
diag import-transformers 60 X=1 'import torch, transformers, magneton, magneton._torch; print("ok")'
rec_code='import os, sys, tempfile, torch, magneton
dev = sys.argv[1] if len(sys.argv) > 1 else os.environ["DIAG_DEV"]
fps = os.environ.get("DIAG_FPS") == "1"
x = torch.randn(64, 64, device=dev); lin = torch.nn.Linear(64, 64).to(dev)
print("tensors ready on", dev, flush=True)
p = tempfile.mktemp(suffix=".mgt")
with torch.no_grad(), magneton.record(p, fingerprints=fps) as rec:
    print("recording started", flush=True)
    y = torch.relu(lin(x)); torch.ones(3, device=dev).sum().item()
    print("ops ran", flush=True)
print("stopped:", rec.summary, flush=True)
run = magneton.load_run(p)
print("loaded: ops", len(run["ops"]), "kernels", len(run["kernels"]), "stats", [s["name"] for s in run["stats"]])'
diag record-cpu 90 DIAG_DEV=cpu "$rec_code"
diag record-cpu-fingerprints 90 DIAG_DEV=cpu DIAG_FPS=1 "$rec_code"
diag record-cuda-no-cupti 90 DIAG_DEV=cuda MAGNETON_TORCH_KERNELS=0 "$rec_code"
diag record-cuda-fingerprints 90 DIAG_DEV=cuda DIAG_FPS=1 "$rec_code"
diag record-cuda-cupti 90 DIAG_DEV=cuda "$rec_code"
diag record-cuda-cupti-twice 120 DIAG_DEV=cuda "$rec_code
with magneton.record(p, overwrite=True) as rec:
    torch.relu(lin(x)).sum().item()
print(\"second:\", rec.summary)"
fi

step "recording GPT-2 forward on the GPU (values pass, then measured pass)"
for phase in ${TORCH_SH_PHASES:-values measured overhead-ops overhead-kernels}; do
  echo "-- $phase" >> "$OUT/torch.log"
  py 150 "$bench" $phase "$runs" >> "$OUT/torch.log" 2>&1 || echo "torch.sh: phase $phase failed, exit $? (torch.log)"
  [ "$phase" = measured ] && step "overhead: plain vs recorded (fingerprints off)"
done
grep -v '^ROW\|^OVH' "$OUT/torch.log" | tail -n 40

step "summary"
python3 - "$OUT/torch.log" <<'PY' | tee "$OUT/summary.txt"
import json, sys
rows, ovh = [], []
for line in open(sys.argv[1]):
    if line.startswith("ROW "): rows.append(json.loads(line[4:]))
    if line.startswith("OVH "): ovh.append(json.loads(line[4:]))
print(f"{'pass':<9} {'ops':>6} {'aten conn%':>10} {'tensors':>8} {'fps':>6} {'kernels':>8} {'linked%':>8} {'corr':>6} {'time':>6} {'wall s':>7}")
for r in rows:
    print(f"{r['pass']:<9} {r['ops']:>6} {r['aten_connected']:>10} {r['tensors']:>8} {r['fingerprints']:>6} "
          f"{r['kernels']:>8} {str(r['linked_pct']):>8} {r['by_corr']:>6} {r['by_time']:>6} {r['wall_s']:>7}")
print(f"\n{'overhead':<12} {'size':>7} {'plain ms':>9} {'recorded ms':>12} {'overhead':>9}")
for o in ovh:
    print(f"{o['config']:<12} {o['size']:>7} {o['plain_ms']:>9} {o['recorded_ms']:>12} {o['overhead_pct']:>8}%")
PY
rm -rf "$runs" "$bench"
step "done"
