#!/usr/bin/env bash
# The kernel-level diff on the GPU machine (issue 22, item 3): programs
# recorded whole with no code change (`magneton record -o X.mgt -- CMD`), no
# operators and no NVTX ranges, then `magneton diff a.mgt b.mgt`, in one
# device call. Pairs:
#  1. tf32: scripts/gpu/train_script.py (fp32 MLP training, 8 x 4096, batch 256)
#     with TF32 off (a) and on (b): expect `kernels` waste on a (FFMA GEMMs
#     against TF32 ones), rule fp32-kernels-not-tf32;
#  2. sync: the same script with `loss.item()` every step (a) and without (b):
#     expect a `timeline` finding on a naming cudaStreamSynchronize;
#  3. contiguous: a transposed copy before each layer (a) and none (b): expect
#     `kernels` waste on a with the copy kernels only a launches;
#  4. attention: scripts/gpu/gpt2_script.py, eager (a) against sdpa (b): expect
#     `kernels` waste on a at the attention;
#  5. engine: cases/cublas-engine/engine.cu, FP32 (a) against TF32 (b), recorded
#     with --no-nvtx (so its ranges are not there to match by): expect `kernels`
#     waste on a, a/b energy near 6.45x (cases/groundtruth-h200.json);
#  6. A/A: pair 1's a recorded again: expect no waste.
# Each script prints its loop's time and NVML energy per step (the ground
# truth); the summary puts them beside the diff's per-iteration figures and
# its top finding. Files back in $OUT: log.txt, summary.txt, results.tgz (each
# pair's table, JSON and HTML), runs.tar.xz (the run files, when they fit).
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/kernel_diff.sh
#   BUDGET seconds (default 540), PAIRS (default: all of tf32 sync contiguous attention engine aa),
#   ROUTE (kernel, the default: `magneton record -- CMD`; script: the same Python scripts through
#   the one-command route `python -m magneton record -o X.mgt SCRIPT ARGS`, operators and both passes;
#   twopass: the two-pass CLI route, `--pass recording SCRIPT ARGS --iters 3` into X.mgt and
#   `--pass measured SCRIPT ARGS` into X-m.mgt, diffed with --measured-a/-b)
# Budget: about 5 minutes on the H200 with .gpubin carried: 11 recordings of
# 10-20 s each (imports, cuBLAS warm-up, ~3 s of steps), engine.cu ~15 s.
# GPU_DRY=1: the same steps on a CPU with tiny models and build/magneton, to try
# the script (the recordings then hold no kernels and the diffs find nothing):
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/kd scripts/gpu/kernel_diff.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/kernel-diff-out}
BUDGET=${BUDGET:-540}
PAIRS=${PAIRS:-"tf32 sync contiguous attention engine aa"}
ROUTE=${ROUTE:-kernel}
mkdir -p "$OUT"
log="$OUT/log.txt"
: > "$log"
W=$(mktemp -d /tmp/kd.XXXX)
mkdir -p "$W/res" "$W/runs"
export PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error
py=${MAGNETON_PYTHON:-python3}
has() { [[ " $PAIRS " == *" $1 "* ]]; }

dry=${GPU_DRY:-0}
if [ "$dry" = 1 ]; then
  M=$PWD/build/magneton
  train=(--tiny --iters 5)
  gpt2=(--tiny --iters 5)
else
  step "binaries"
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$log" 2>&1 || { echo "build failed (log.txt)"; exit 1; }
  M=$PWD/build-gpu/magneton
  train=(--iters 300)
  gpt2=(--iters 150)
  nvidia-smi --query-gpu=name,driver_version,power.draw,temperature.gpu,clocks.sm --format=csv >> "$log" 2>&1
fi
export MAGNETON_RULES=$PWD/rules
[ -x "$M" ] || { echo "kernel_diff.sh: $M is not built" | tee -a "$log"; exit 1; }

# record NAME [OPTIONS] -- CMD...: the program recorded whole; its own output line kept as
# the ground truth. ROUTE=script: a Python script is recorded with the one-command route
# instead (`python -m magneton record -o X.mgt SCRIPT ARGS`: operators, both passes).
record() {
  local name=$1; shift
  step "record $name: $*"
  if [ "$ROUTE" = script ] || [ "$ROUTE" = twopass ]; then
    while [ "$1" != -- ]; do shift; done; shift
    [ "$1" = "$py" ] || { echo "  not a Python script: left out of ROUTE=$ROUTE" | tee -a "$log"; return; }
    shift
    local run=(env PYTHONPATH="$PWD/python" "$py" -m magneton record -f)
    if [ "$ROUTE" = twopass ]; then
      t 120 "${run[@]}" -o "$W/runs/$name.mgt" --pass recording "$@" --iters 3 > /dev/null 2>> "$log"
      echo "  recording pass: exit $?" | tee -a "$log"
      set -- "${run[@]}" -o "$W/runs/$name-m.mgt" --pass measured "$@"
    else
      set -- "${run[@]}" -o "$W/runs/$name.mgt" "$@"
    fi
  else
    set -- "$M" record -f -o "$W/runs/$name.mgt" "$@"
  fi
  t 120 "$@" > "$W/res/$name.out" 2>> "$log"
  echo "  exit $?; $(grep -h 'train_script:\|forwards\|engine' "$W/res/$name.out" | tail -n 1)" | tee -a "$log"
}
# diff NAME A B: table, JSON and HTML of the kernel-level diff.
diff_pair() {
  local name=$1 a=$W/runs/$2.mgt b=$W/runs/$3.mgt
  local measured=()
  [ "$ROUTE" = twopass ] && measured=(--measured-a "$W/runs/$2-m.mgt" --measured-b "$W/runs/$3-m.mgt")
  step "diff $name"
  t 60 "$M" diff "$a" "$b" "${measured[@]}" --color never --html "$W/res/$name.html" > "$W/res/$name.txt" 2>> "$log"
  echo $? > "$W/res/$name.exit"
  echo "  exit $(cat "$W/res/$name.exit")" | tee -a "$log"
  t 60 "$M" diff "$a" "$b" "${measured[@]}" --json > "$W/res/$name.json" 2>> "$log"
  head -n 30 "$W/res/$name.txt" >> "$log"
}

ts=scripts/gpu/train_script.py
if has tf32; then
  record tf32-off -- $py $ts --tf32 off "${train[@]}"
  record tf32-on -- $py $ts --tf32 on "${train[@]}"
  diff_pair tf32 tf32-off tf32-on
fi
if has sync; then
  record sync-item -- $py $ts --tf32 on --item "${train[@]}"
  has tf32 || record tf32-on -- $py $ts --tf32 on "${train[@]}"
  diff_pair sync sync-item tf32-on
fi
if has contiguous; then
  record contiguous -- $py $ts --tf32 on --contiguous "${train[@]}"
  has tf32 || has sync || record tf32-on -- $py $ts --tf32 on "${train[@]}"
  diff_pair contiguous contiguous tf32-on
fi
if has attention; then
  record eager -- $py scripts/gpu/gpt2_script.py --attn eager "${gpt2[@]}"
  record sdpa -- $py scripts/gpu/gpt2_script.py --attn sdpa "${gpt2[@]}"
  diff_pair attention eager sdpa
fi
if has engine; then
  engine=build-gpu/cases/engine
  if [ "$dry" != 1 ] && command -v nvcc > /dev/null; then
    mkdir -p build-gpu/cases
    [ -x "$engine" ] || t 120 nvcc -O2 -std=c++17 -o "$engine" cases/cublas-engine/engine.cu -lcublas -ldl >> "$log" 2>&1
  fi
  if [ -x "$engine" ]; then
    record engine-fp32 --no-nvtx -- "$engine" --compute fp32 --seconds 1 --warmup 1
    record engine-tf32 --no-nvtx -- "$engine" --compute tf32 --seconds 1 --warmup 1
    diff_pair engine engine-fp32 engine-tf32
  else
    step "engine: not compiled (no nvcc, or a CPU machine)"
  fi
fi
if has aa; then
  has tf32 || record tf32-off -- $py $ts --tf32 off "${train[@]}"
  record tf32-off-again -- $py $ts --tf32 off "${train[@]}"
  diff_pair aa tf32-off tf32-off-again
fi

step "summary"
{
  echo "diff of whole programs (route $ROUTE), $(date -u +%F\ %T) UTC, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no GPU')"
  printf "%-11s %-5s %-9s %-10s %-8s %-12s %-12s %s\n" pair exit matched_by waste class costly saved/it "top finding"
  for name in tf32 sync contiguous attention engine aa; do
    j=$W/res/$name.json
    [ -f "$W/res/$name.exit" ] || continue
    rc=$(cat "$W/res/$name.exit")
    if [ ! -s "$j" ]; then printf "%-11s %-5s (no report: log.txt)\n" "$name" "$rc"; continue; fi
    $py - "$j" "$name" "$rc" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
f = next((f for f in j["findings"] if f["verdict"] == "waste"), j["findings"][0] if j["findings"] else None)
s, name, rc = j["summary"], sys.argv[2], sys.argv[3]
if f is None:
    print(f"{name:<11} {rc:<5} {s.get('matched_by', '-'):<9} {s['waste']:<10} no findings")
else:
    print(f"{name:<11} {rc:<5} {s.get('matched_by', '-'):<9} {s['waste']:<10} {f['evidence_class']:<8} "
          f"{f['costly']:<12} {f['saved_per_iteration']:<12.4g} {f['label'][:90]}")
EOF
  done
  echo "ground truth (each program's own loop, NVML counter):"
  grep -h "train_script:\|forwards\|engine" "$W"/res/*.out 2>/dev/null
} | tee "$OUT/summary.txt"
(cd "$W" && tar czf "$OUT/results.tgz" res)
(cd "$W" && tar cJf "$OUT/runs.tar.xz" runs) && fit "$OUT/runs.tar.xz"
[ "$(stat -c %s "$OUT/runs.tar.xz" 2>/dev/null || echo 0)" -gt $((15 * 1024 * 1024)) ] && rm -f "$OUT/runs.tar.xz"*
rm -rf "$W"
exit 0
