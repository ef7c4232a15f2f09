#!/usr/bin/env bash
# Recording overhead on the GPU machine (issues 4 and 5), in one device call:
#  1. `magneton record -- CMD` (CUPTI injection) on a GPT-2 small forward loop
#     (scripts/gpu/gpt2_loop.py: batch 8, sequence 128, random weights; launch
#     bound: ~2,400 kernels per 10 iterations), in these modes:
#       plain         the loop alone
#       measure       `magneton measure`: the energy samplers in another process
#       record        `magneton record` (samplers inside the traced process)
#       no-energy     record --no-energy: CUPTI alone
#       nvml          record --energy nvml: NVML's sampler only (no RAPL, no procfs)
#       outside       `magneton measure -- magneton record --no-energy`: CUPTI
#                     in the program, samplers outside it
#       kernels       record --no-energy --api none --no-nvtx: kernel and copy
#                     records only
#       profiler      torch.profiler (Kineto, CUPTI too) on the same loop: a reference
#       stacks        record --stacks
#       MODE-pin      any mode above with the whole process (CUPTI's and Magneton's
#                     threads too) held to the CPUs PIN_CPUS (default 2-5) by taskset
#     Modes alternate within each round, so drift hits them alike; each run
#     reports the loop's own wall time (after warm-up, synchronized), LOOPS times
#     per process (a slow process and a slow loop look different), and the
#     whole process's wall time;
#  2. the torch recorder (magneton.record, fingerprints off) against a plain
#     run in the same process, at a launch-bound and a GPU-bound size
#     (scripts/gpu/torch.sh, phases overhead-ops and overhead-kernels).
# Prints medians and overheads; files back in $OUT: overhead.txt, log.txt.
# About 4 minutes on the H200 with .gpubin carried (no build).
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/overhead.sh
#   ROUNDS (default 2), ITERS (default 300), BUDGET seconds (default 480: a run takes ~23 s,
#   mostly imports and model set-up, so one round of 9 modes needs ~210 s), MODES (default all),
#   LOOPS (timed loops per process, default 1), PIN_CPUS (for MODE-pin), TORCH_PART (default 1; 0 skips step 2).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
OUT=${OUT:-/tmp/overhead-out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
: > "$LOG"
BUDGET=${BUDGET:-480}
ROUNDS=${ROUNDS:-2}
ITERS=${ITERS:-300}
LOOPS=${LOOPS:-1}
PIN_CPUS=${PIN_CPUS:-2-5}
source scripts/gpu_env.sh
step() { echo "== $* ($(( $(date +%s) - start )) s)" | tee -a "$LOG"; }
left() { echo $(( BUDGET - ($(date +%s) - start) )); }

step "build"
gpu_build magneton magneton_cupti magneton_torch >> "$LOG" 2>&1 || { echo "overhead.sh: build failed (log.txt)"; exit 1; }
M=$PWD/build-gpu/magneton
WORK=$(mktemp -d /tmp/overhead.XXXX)

modes=${MODES:-"plain record no-energy nvml measure outside kernels profiler stacks"}
step "magneton record: $ROUNDS rounds x modes ($modes), GPT-2 $ITERS iterations"
for round in $(seq "$ROUNDS"); do
  for mode in $modes; do
    [ "$(left)" -lt $(( 40 + 3 * LOOPS )) ] && { echo "round $round $mode: skipped, out of time" >> "$LOG"; continue; }
    loop_cmd=(python3 scripts/gpu/gpt2_loop.py --iters "$ITERS" --loops "$LOOPS")
    rec=("$M" record -f -o "$WORK/r.mgt")
    pin=()
    case $mode in *-pin) pin=(taskset -c "$PIN_CPUS") ;; esac
    case ${mode%-pin} in
      plain) cmd=("${loop_cmd[@]}") ;;
      measure) cmd=("$M" measure -- "${loop_cmd[@]}") ;;
      record) cmd=("${rec[@]}" -- "${loop_cmd[@]}") ;;
      no-energy) cmd=("${rec[@]}" --no-energy -- "${loop_cmd[@]}") ;;
      nvml) cmd=("${rec[@]}" --energy nvml -- "${loop_cmd[@]}") ;;
      outside) cmd=("$M" measure -- "${rec[@]}" --no-energy -- "${loop_cmd[@]}") ;;
      kernels) cmd=("${rec[@]}" --no-energy --api none --no-nvtx -- "${loop_cmd[@]}") ;;
      profiler) cmd=("${loop_cmd[@]}" --profile) ;;
      stacks) cmd=("${rec[@]}" --stacks -- "${loop_cmd[@]}") ;;
    esac
    rm -f "$WORK/r.mgt"
    t0=$(date +%s%N)
    out=$(timeout -k 5 $(( 90 + 10 * LOOPS )) "${pin[@]}" "${cmd[@]}" 2>>"$LOG")
    rc=$?
    t1=$(date +%s%N)
    loop=$(echo "$out" | awk '/^LOOP_S/{print $2}' | paste -sd, -)
    cpu=$(echo "$out" | awk '/^LOOP_CPU_S/{print $2}' | paste -sd, -)
    rows=""
    [ -f "$WORK/r.mgt" ] &&
      rows=$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(*[c.execute(f'select count(*) from {t}').fetchone()[0] for t in ('kernels','api_calls','stacks')])" "$WORK/r.mgt" 2>>"$LOG")
    echo "RUN $mode $round ${loop:-nan} $(( (t1 - t0) / 1000000 )) $rc ${rows:-}" | tee -a "$LOG"
    echo "CPU $mode $round ${cpu:-nan}" >> "$LOG"
  done
done

step "torch recorder overhead (fingerprints off)"
if [ "${TORCH_PART:-1}" = 0 ]; then
  echo "skipped: TORCH_PART=0" > "$WORK/torch-ovh.txt"
elif [ "$(left)" -gt 60 ]; then
  PYTHONPATH=$PWD/python NO_BUILD=1 TORCH_SH_PHASES="measured overhead-ops overhead-kernels overhead-energy" OUT=$WORK/torch \
    timeout -k 5 $(( $(left) - 10 )) bash scripts/gpu/torch.sh >> "$LOG" 2>&1
  cp "$WORK/torch/summary.txt" "$WORK/torch-ovh.txt" 2>/dev/null
else
  echo "skipped: out of time" > "$WORK/torch-ovh.txt"
fi

step "summary"
{
  echo "recording overhead on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "magneton record, GPT-2 small forward x $ITERS (batch 8, seq 128), $LOOPS loop(s) per process,"
  echo "$ROUNDS rounds; loop s: median of every loop of the mode; spread: fastest and slowest loop"
  python3 - "$LOG" <<'PY'
import statistics, sys
runs, order = {}, []
for line in open(sys.argv[1]):
    if line.startswith("RUN "):
        _, mode, _, loops, wall_ms, rc, *rows = line.split()
        loops = [float(x) for x in loops.split(",") if x not in ("", "nan")]
        if mode not in runs:
            order.append(mode)
        runs.setdefault(mode, []).append((loops, int(wall_ms) / 1e3, rc, rows))
med = lambda v: statistics.median(v) if v else float("nan")
def base(mode):
    b = runs.get("plain-pin" if mode.endswith("-pin") and "plain-pin" in runs else "plain", [])
    return med([x for r in b for x in r[0]]), med([r[1] for r in b])
print(f"{'mode':<14} {'n':>2} {'loop s':>8} {'loop ovh':>9} {'fastest':>8} {'slowest':>8} {'process s':>10} "
      f"{'proc ovh':>9}  kernels api_calls stacks")
for mode in order:
    rs = runs[mode]
    pl, pw = base(mode)
    allx = [x for r in rs for x in r[0]]
    l = med(allx); w = med([r[1] for r in rs])
    lo, hi = (min(allx), max(allx)) if allx else (float("nan"), float("nan"))
    print(f"{mode:<14} {len(rs):>2} {l:>8.4f} {100 * (l / pl - 1):>+8.1f}% {100 * (lo / pl - 1):>+7.1f}% "
          f"{100 * (hi / pl - 1):>+7.1f}% {w:>10.2f} {100 * (w / pw - 1):>+8.1f}%  "
          f"{' '.join(rs[-1][3]) or '-'}  exits {','.join(r[2] for r in rs)}")
print("each process's loops (s):")
for mode in order:
    print(f"  {mode:<14} " + " | ".join(",".join(f"{x:.3f}" for x in r[0]) or "-" for r in runs[mode]))
# The loop thread's CPU time: the launch path's own cost, which other tenants' load does not move.
cpu = {}
for line in open(sys.argv[1]):
    if line.startswith("CPU "):
        _, mode, _, xs = line.split()
        cpu.setdefault(mode, []).extend(float(x) for x in xs.split(",") if x not in ("", "nan"))
if cpu:
    print("loop thread CPU s: median (fastest, slowest), overhead of the median against plain")
    for mode in order:
        xs = cpu.get(mode, [])
        if not xs:
            continue
        b = cpu.get("plain-pin" if mode.endswith("-pin") and "plain-pin" in cpu else "plain", [])
        pb = med(b)
        print(f"  {mode:<14} {med(xs):.4f} ({min(xs):.4f}, {max(xs):.4f}) {100 * (med(xs) / pb - 1):+.1f}%")
PY
  echo
  echo "torch recorder (magneton.record, fingerprints off), median of 30 forwards"
  cat "$WORK/torch-ovh.txt"
} | tee "$OUT/overhead.txt"
rm -rf "$WORK"
step "done"
