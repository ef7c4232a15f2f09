#!/usr/bin/env bash
# magneton diff / demo on the GPU machine (issue 7), in one device call:
#  1. builds the magneton command and magneton._torch in build-gpu;
#  2. `magneton demo --case gpt2-conv1d`: GPT-2 (12 layers, 768 wide, batch 8,
#     sequence 1024) with HF Conv1D as addmm (a) vs mm + add (b), NVML energy;
#  3. `magneton demo --case unet-tf32`: TF32 off (a) vs on (b), expecting the
#     allow_tf32 key as the root cause;
#  4. the A/A pair: the addmm variant recorded again and diffed against the
#     first recording (expect no waste);
#  5. small GPU recordings for the CI fixtures (tests/data/diff/gpu/: the
#     UNet-like TF32 pair, small; the GPT-2 Conv1D pair, tiny), the
#     Perfetto export of one of them, and a check (regression gate) run;
#  6. prints a table. Files back in $OUT (8): build.log, diff.log, summary.txt,
#     conv1d.json, tf32.json, aa.json, report-conv1d.html, fixtures.tar.gz
#     (GPU fixtures + the TF32 report + the trace).
# Budget: about 4 minutes on the H200 with .gpubin carried (no build): per
# process ~10 s of start-up and imports, 2 demo cases x 2 variants (fingerprint
# pass, replay of Conv1D's operators, ~1 s measured pass), the A/A recording and 4 small fixture
# recordings. Hard cap: BUDGET seconds (default 540); every step's timeout is cut
# to what is left, so a hang cannot outlast the call, and diff.log is written as
# it goes.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/diff.sh
# FIXTURES=0 skips step 5 (the CI fixtures; about a minute).
# GPU_DRY=1 (or DIFF_SH_DRY=1): the same steps on a CPU machine (tiny models,
# --device cpu, 3 iterations; no CUDA check), with the binaries of
# scripts/gpu/prebuild.sh, to try this script off the GPU machine:
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/dry-diff scripts/gpu/diff.sh
# (about 2 minutes on a 2-core CPU machine).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/diff-out}
BUDGET=${BUDGET:-540}
mkdir -p "$OUT"
log="$OUT/diff.log"
: > "$log"
step() { echo "== $* ($(( $(date +%s) - start )) s)" | tee -a "$log"; }
# t SECONDS CMD...: CMD under a timeout cut to the budget (killed 5 s after SIGTERM).
t() { local s; s=$(cap "$1"); shift; timeout -k 5 "$s" "$@"; }

dry=${GPU_DRY:-${DIFF_SH_DRY:-0}}
# On the GPU the measured passes last about a second each (the demo's default).
dev=cuda; size=(); iters=(); fix_iters=20; py=${MAGNETON_PYTHON:-python3}
if [ "$dry" = 1 ]; then dev=cpu; size=(--size tiny); iters=(--iterations 3); fix_iters=3; fi

step "checking the machine"
missing=""
$py -c "import torch, transformers, sqlite3" 2>/dev/null || missing+=" $py(torch/transformers/sqlite3)"
[ "$dry" = 1 ] || $py -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || missing+=" cuda-device"
if [ ! -d .gpubin ]; then  # building here: the headers the build needs
  $py -c "import pybind11" 2>/dev/null || missing+=" pybind11"
  for h in eigen3/Eigen/Core nlohmann/json.hpp fmt/core.h CLI/CLI.hpp; do
    [ -e /usr/include/$h ] || [ -e /tmp/gpudeps/usr/include/$h ] || missing+=" $h"
  done
fi
if [ -n "$missing" ]; then echo "diff.sh: missing on this machine:$missing" | tee "$OUT/build.log"; exit 2; fi
$py -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu')" | tee -a "$log"

: > "$OUT/build.log"
step "building magneton and magneton._torch (build-gpu)"
gpu_build magneton magneton_torch >> "$OUT/build.log" 2>&1 || echo "diff.sh: build failed (build.log)"
tail -n 3 "$OUT/build.log"
M=$PWD/build-gpu/magneton
export PYTHONPATH=$PWD/python MAGNETON_PYTHON=$(command -v $py) MAGNETON_RULES=$PWD/rules
export TRANSFORMERS_VERBOSITY=error
if [ ! -x "$M" ] || ! $py -c "import torch, magneton._torch" 2>>"$OUT/build.log"; then
  echo "diff.sh: magneton or magneton._torch did not build (build.log)"; exit 1
fi
runs=/tmp/diff-runs
rm -rf "$runs"; mkdir -p "$runs"

step "demo gpt2-conv1d (${size[*]:-full size}, ${iters[*]:-1 s measured passes}, replay of Conv1D's operators)"
t 300 "$M" demo --case gpt2-conv1d --device $dev "${size[@]}" "${iters[@]}" --out "$runs/conv1d" --color never >> "$log" 2>&1
echo "exit $?" >> "$log"
t 60 "$M" diff "$runs/conv1d/addmm.mgt" "$runs/conv1d/mm_add.mgt" --measured-a "$runs/conv1d/addmm-measured.mgt" \
  --measured-b "$runs/conv1d/mm_add-measured.mgt" --json > "$OUT/conv1d.json" 2>> "$log"
cp "$runs/conv1d/report.html" "$OUT/report-conv1d.html" 2>/dev/null

step "demo unet-tf32 (${size[*]:-full size})"
t 120 "$M" demo --case unet-tf32 --device $dev "${size[@]}" "${iters[@]}" --out "$runs/tf32" --color never >> "$log" 2>&1
echo "exit $?" >> "$log"
t 60 "$M" diff "$runs/tf32/fp32.mgt" "$runs/tf32/tf32.mgt" --measured-a "$runs/tf32/fp32-measured.mgt" \
  --measured-b "$runs/tf32/tf32-measured.mgt" --json > "$OUT/tf32.json" 2>> "$log"

step "A/A: the addmm variant again"
t 200 $py -m magneton.demo.gpt2_blocks --variant addmm --device $dev "${size[@]}" "${iters[@]}" \
  --out "$runs/conv1d/addmm_again.mgt" --measured "$runs/conv1d/addmm_again-measured.mgt" >> "$log" 2>&1
echo "exit $?" >> "$log"
t 60 "$M" diff "$runs/conv1d/addmm.mgt" "$runs/conv1d/addmm_again.mgt" --measured-a "$runs/conv1d/addmm-measured.mgt" \
  --measured-b "$runs/conv1d/addmm_again-measured.mgt" --color never >> "$log" 2>&1
echo "A/A exit $?" >> "$log"
t 60 "$M" diff "$runs/conv1d/addmm.mgt" "$runs/conv1d/addmm_again.mgt" --measured-a "$runs/conv1d/addmm-measured.mgt" \
  --measured-b "$runs/conv1d/addmm_again-measured.mgt" --json > "$OUT/aa.json" 2>> "$log"

if [ "${FIXTURES:-1}" = 1 ]; then
step "small GPU fixtures, export, check"
fix="$runs/fixtures/gpu"
mkdir -p "$fix"
for v in fp32 tf32; do
  t 60 $py -m magneton.demo.unet_tf32 --variant $v --size small --device $dev --iterations $fix_iters \
    --out "$fix/unet_$v.mgt" --measured "$fix/unet_$v-measured.mgt" >> "$log" 2>&1
done
for v in addmm mm_add; do
  t 60 $py -m magneton.demo.gpt2_blocks --variant $v --size tiny --device $dev --iterations $fix_iters \
    --out "$fix/gpt2_$v.mgt" --measured "$fix/gpt2_$v-measured.mgt" >> "$log" 2>&1
done
for f in "$fix"/*.mgt; do t 30 $py -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('VACUUM'); c.close()" "$f"; done
t 60 "$M" export --perfetto "$fix/unet_fp32-measured.mgt" -o "$runs/fixtures/unet_fp32.trace.json" >> "$log" 2>&1
echo "export exit $?" >> "$log"
t 60 "$M" check --baseline "$fix/unet_tf32.mgt" "$fix/unet_fp32.mgt" --measured-a "$fix/unet_tf32-measured.mgt" \
  --measured-b "$fix/unet_fp32-measured.mgt" --max-regression 5% --color never >> "$log" 2>&1
echo "check exit $? (1 expected: TF32 off regresses)" >> "$log"
cp "$runs/tf32/report.html" "$runs/fixtures/report-tf32.html" 2>/dev/null
tar -czf "$OUT/fixtures.tar.gz" -C "$runs/fixtures" . 2>> "$log"
fi
fit "$OUT"/*

step "summary"
$py - "$OUT" > "$OUT/summary.txt" <<'PY'
import json, sys, os
out = sys.argv[1]
print(f"{'pair':<8} {'unit':<4} {'waste':>5} {'top finding (costly side)':<70} {'class':<9} {'saved/it':>10} {'delta':>8} {'time':>7}  keys / rules")
for name in ("conv1d", "tf32", "aa"):
    try:
        d = json.load(open(os.path.join(out, name + ".json")))
    except Exception as e:  # noqa: BLE001
        print(f"{name:<8} no result ({e})"); continue
    fs = [f for f in d["findings"] if f["verdict"] != "noise"]
    waste = d["summary"]["waste"]
    if not fs:
        print(f"{name:<8} {d['unit']:<4} {waste:>5} (no waste, no trade-off; {d['summary']['regions']} regions matched)")
        continue
    f = fs[0]
    keys = sorted({c["key"] for e in f["evidence"] for c in e["config"]})
    rules = [r["id"] for r in f["rules"]]
    label = (f["label"][:62] + f" ({f['costly']})")
    print(f"{name:<8} {d['unit']:<4} {waste:>5} {label:<70} {f['evidence_class']:<9} "
          f"{f['saved_per_iteration']:>10.4g} {f['cost_delta_pct']:>7.1f}% {f['time_delta_pct']:>6.1f}%  "
          f"{','.join(keys) or '-'} / {','.join(rules) or '-'}")
    for n in d["notes"]:
        print(f"{'':<8} note: {n}")
PY
cat "$OUT/summary.txt"
ls -la "$OUT" >> "$log"
step "done"
