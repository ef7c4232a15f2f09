#!/usr/bin/env bash
# `magneton demo` on the GPU machine, as a user runs it, in one device call:
#  1. the magneton command and extensions in build-gpu (or .gpubin's);
#  2. `magneton demo` with no options (on a GPU: the gpt2-attention pair, GPT-2
#     blocks "medium", fp16, eager attention (a) vs scaled_dot_product_attention
#     (b)), timed from start to reports: the goal is at most 60 s, recording,
#     replay (none for this pair) and diff included; its progress lines land in
#     demo.txt as they are printed;
#  3. the ground truth of the same pair at the same size: long windows
#     alternated, NVML's counter (scripts/gpu/measured_pass.py truth --demo);
#  4. prints a table: the demo's wall time, its top finding and saving, all the
#     waste on that side together, and the ground truth's saving (agreement of
#     each: within max(5 points, 25% relative)).
# Files back in $OUT: demo.txt, diff.json, report.html, truth.json, summary.txt,
# demo-runs.tar.xz (the four run files, for tests/data/diff/gpu/ and the report's
# screenshot in docs/).
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/demo.sh
#   BUDGET seconds (default 300)
# GPU_DRY=1: the same on the CPU (tiny size, 3 iterations, no energy), to try the script:
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/dry-demo scripts/gpu/demo.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh  # step, t (a timeout within BUDGET), gpu_build
OUT=${OUT:-/tmp/demo-out} BUDGET=${BUDGET:-300} log=$OUT/summary.txt
mkdir -p "$OUT" && : > "$log"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python MAGNETON_PYTHON=${MAGNETON_PYTHON:-python3}

dry=${GPU_DRY:-0}
demo_args=(); truth_args=(--demo medium --seconds 3 --trials 2)
if [ "$dry" = 1 ]; then
  M=$PWD/build/magneton
  demo_args=(--case gpt2-attention --device cpu --size tiny --iterations 3)
  truth_args=(--demo tiny --seconds 0.5 --trials 2)
else
  step "binaries"
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$OUT/build.log" 2>&1 || { echo "build failed"; exit 1; }
  M=$PWD/build-gpu/magneton
  nvidia-smi --query-gpu=name,driver_version,power.draw,temperature.gpu --format=csv >> "$log" 2>&1
fi

step "magneton demo ${demo_args[*]}"
W=$(mktemp -d /tmp/demo.XXXX)
t0=$(date +%s%N)
t 240 "$M" demo --out "$W/demo" --color never "${demo_args[@]}" 2>&1 | tee "$OUT/demo.txt"
rc=${PIPESTATUS[0]}
wall=$(( ($(date +%s%N) - t0) / 1000000 ))  # ms (the GPU machine has no bc)
cp "$W/demo/diff.json" "$W/demo/report.html" "$OUT/" 2>/dev/null
(cd "$W/demo" && tar cJf "$OUT/demo-runs.tar.xz" ./*.mgt) 2>/dev/null

step "ground truth of the same pair"
t 120 "$MAGNETON_PYTHON" scripts/gpu/measured_pass.py truth --out "$OUT" "${truth_args[@]}" 2>&1 | tail -n 3 | tee -a "$log"

step "table"
"$MAGNETON_PYTHON" - "$OUT" "$rc" "$wall" <<'PY' | tee -a "$log"
import json, sys
from pathlib import Path
out, rc, wall = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) / 1000
print(f"demo: exit {rc}, {wall:.1f} s from start to reports (goal: at most 60 s)")
try:
    d = json.loads((out / "diff.json").read_text())
    top = next((f for f in d["findings"] if f["verdict"] == "waste"), None)
    unit = d.get("unit", "?")
    if top:
        print(f"top waste: {top['label'][:120]}; {top['evidence_class']}; costly {top['costly']}; "
              f"saves {top['saved_pct_of_run']:.1f}% of the run ({unit})")
        # The truth is the whole difference: every waste the costlier side shows (the
        # eager attention's own regions and the mask it alone builds), in disjoint regions.
        side = [f for f in d["findings"] if f["verdict"] == "waste" and f["costly"] == top["costly"]]
        total = sum(f["saved_pct_of_run"] for f in side)
        print(f"all waste on {top['costly']}: {len(side)} findings, {total:.1f}% of the run")
    else:
        print("no waste finding")
except (OSError, ValueError, KeyError) as e:
    print(f"diff.json unreadable: {e}")
    top = None
try:
    t = json.loads((out / "truth.json").read_text())
    s = t.get("saving_pct")
    print(f"ground truth: eager {t['eager']['j_per_iter']} J, {t['eager']['s_per_iter'] * 1e3:.2f} ms; "
          f"sdpa {t['sdpa']['j_per_iter']} J, {t['sdpa']['s_per_iter'] * 1e3:.2f} ms; saving {s}")
    if top and s is not None:
        for what, got in (("top finding", top["saved_pct_of_run"]), ("all waste on its side", total)):
            ok = abs(got - s) <= max(5, 0.25 * abs(s))
            print(f"agreement ({what}): {got:.1f}% vs {s:.1f}%: {'yes' if ok else 'no'}")
except (OSError, ValueError, KeyError) as e:
    print(f"truth.json unreadable: {e}")
PY
rm -rf "$W"
