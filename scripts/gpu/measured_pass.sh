#!/usr/bin/env bash
# The measured pass on the GPU machine (issue "The measured pass must be the
# program as it runs"), in one device call:
#  1. overhead: plain against the measured pass (CUPTI activity + NVML, no
#     per-operator work) and its parts (CUPTI alone, samplers alone, CUPTI with
#     every API call, torch.profiler), alternated over ROUNDS in one process,
#     for the MLP (24 x 1024, 64 rows), GPT-2 small fp16 at 1 x 64 and at
#     8 x 512, each with one run of the operator-level pass (ops=True) and a
#     recording pass; then the MLP loop plain and under `magneton record --`
#     (the injection library) in 3 processes each;
#  2. per-iteration device time: each workload's recording pass diffed against
#     itself with its measured pass (`per_iteration` in the JSON), beside the
#     plain run's CUDA-event time;
#  3. GPT-2 small fp16 8 x 512, eager against sdpa attention (same weights):
#     recording and measured passes, long-window ground truth (NVML counter),
#     `magneton diff` (table, JSON, HTML);
#  4. the command-line two-pass route on a whole script (scripts/gpu/gpt2_script.py:
#     set-up, a loop, a summary): --fingerprints --iters 1 and a measured pass of
#     --iters 150 for each attention, then `magneton diff`;
#  5. what each API call selection records of a step's waits (measured_pass.py syncs).
# Prints a table; files back in $OUT: log.txt, summary.txt, results.tgz (JSON,
# tables, reports), pair-runs.tar.xz (the run files of 3), script-runs.tar.xz
# (those of 4 and the MLP's recording and measured passes).
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/measured_pass.sh
#   BUDGET seconds (default 540), ROUNDS (default 5), STEPS (default: 1 2 3 4; 5 on request),
#   WORKLOADS (default: mlp gpt2-1x64 gpt2-8x512), INJECTION=0 skips step 1's loops in processes of their own,
#   LOOP_WORKLOADS (theirs; default mlp),
#   MODES (step 1's modes, comma-separated; default all of measured_pass.py's MODES),
#   RUN_SECONDS (step 1's length of each run; default 0.5: past 2 s a measured run has untraced steps),
#   PAIR_API (MAGNETON_TORCH_API for step 3's measured passes), PAIR_TRACED (their traced steps)
# GPU_DRY=1: the same steps on a CPU with tiny models (with scripts/gpu/prebuild.sh's binaries
# or a build in build/), to try the script:
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/mp scripts/gpu/measured_pass.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/measured-pass-out}
BUDGET=${BUDGET:-540}
ROUNDS=${ROUNDS:-6}
STEPS=${STEPS:-"1 2 3 4"}
WORKLOADS=${WORKLOADS:-"mlp gpt2-1x64 gpt2-8x512"}
mkdir -p "$OUT"
log="$OUT/log.txt"
: > "$log"
W=$(mktemp -d /tmp/mp.XXXX)
mkdir -p "$W/res" "$W/runs"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python
py=${MAGNETON_PYTHON:-python3}
step() { echo "== $* ($(( $(date +%s) - start )) s)" | tee -a "$log"; }
t() { local s; s=$(cap "$1"); shift; timeout -k 5 "$s" "$@"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }

dry=${GPU_DRY:-0}
if [ "$dry" = 1 ]; then
  M=$PWD/build/magneton
  script_args=(--tiny)
  iters_m=20
else
  step "binaries"
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$log" 2>&1 || { echo "build failed"; exit 1; }
  M=$PWD/build-gpu/magneton
  script_args=(--batch 2 --seq 128)  # the recording pass fingerprints the whole script: keep it small
  iters_m=400
  nvidia-smi --query-gpu=name,driver_version,power.draw,temperature.gpu,clocks.sm --format=csv >> "$log" 2>&1
fi

if has 1; then
  for w in $WORKLOADS; do
    step "overhead $w ($ROUNDS rounds)"
    t 150 $py scripts/gpu/measured_pass.py overhead "$w" --out "$W/runs" --rounds "$ROUNDS" ${MODES:+--modes "$MODES"} \
      ${RUN_SECONDS:+--seconds "$RUN_SECONDS"} 2>&1 | tail -n 3 | tee -a "$log"
    cp "$W/runs/$w-overhead.json" "$W/res/" 2>/dev/null
  done
  # The same MLP loop under the injection library: CUPTI set up before CUDA.
  # And in-process, entered after the warm-up (late) or before CUDA is touched (early),
  # with API rows as by default (waits) or none: one process per run.
  for r in $([ "${INJECTION:-1}" = 0 ] || echo 1 2 3); do
    for mode in plain record late early late-none early-none; do
     for w in ${LOOP_WORKLOADS:-mlp}; do
      step "$w loop, $mode ($r)"
      cmd=($py scripts/gpu/measured_pass.py loop $w)
      case $mode in
        record) cmd=("$M" record -f -o "$W/runs/$w-inj.mgt" --no-energy -- "${cmd[@]}") ;;
        late|early) cmd+=(--record $mode) ;;
        *-none) cmd=(env MAGNETON_TORCH_API=none "${cmd[@]}" --record ${mode%-none}) ;;
      esac
      t 60 "${cmd[@]}" 2>>"$log" | sed "s|^|$w/$mode |" | tee -a "$W/res/injection.txt"
     done
    done
  done
fi
if has 2; then
  for w in $WORKLOADS; do
    step "per-iteration device time $w"
    r=$W/runs/$w
    t 60 "$M" diff "$r-rec.mgt" "$r-rec.mgt" --measured-a "$r-m.mgt" --measured-b "$r-m.mgt" --json \
      > "$W/res/$w-self.json" 2>> "$log"
    echo "  exit $?" >> "$log"
  done
fi
if has 3; then
  for v in eager sdpa; do
    step "pair $v"
    t 90 $py scripts/gpu/measured_pass.py pair "$v" --out "$W/runs" ${PAIR_API:+--measured-api "$PAIR_API"} \
      ${PAIR_TRACED:+--traced-steps "$PAIR_TRACED"} 2>&1 |
      tail -n 3 | tee -a "$log"
  done
  step "ground truth eager vs sdpa"
  t 90 $py scripts/gpu/measured_pass.py truth --out "$W/res" 2>&1 | tail -n 2 | tee -a "$log"
  step "diff eager vs sdpa"
  r=$W/runs
  t 60 "$M" diff "$r/eager.mgt" "$r/sdpa.mgt" --measured-a "$r/eager-m.mgt" --measured-b "$r/sdpa-m.mgt" \
    --html "$W/res/pair.html" > "$W/res/pair.txt" 2>&1
  echo "  exit $?" | tee -a "$log"
  t 60 "$M" diff "$r/eager.mgt" "$r/sdpa.mgt" --measured-a "$r/eager-m.mgt" --measured-b "$r/sdpa-m.mgt" --json \
    > "$W/res/pair.json" 2>> "$log"
  head -n 40 "$W/res/pair.txt" | tee -a "$log"
fi
if has 4; then
  for v in eager sdpa; do
    step "script route $v"
    s=$W/runs/script-$v
    t 150 $py -m magneton record -f -o "$s.mgt" --fingerprints scripts/gpu/gpt2_script.py --attn "$v" --iters 1 \
      "${script_args[@]}" >> "$log" 2>&1
    echo "  recording pass exit $?" >> "$log"
    t 90 $py -m magneton record -f -o "$s-m.mgt" --energy nvml scripts/gpu/gpt2_script.py --attn "$v" \
      --iters "$iters_m" "${script_args[@]}" >> "$log" 2>&1
    echo "  measured pass exit $?" >> "$log"
  done
  step "diff of the script route"
  s=$W/runs/script
  t 60 "$M" diff "$s-eager.mgt" "$s-sdpa.mgt" --measured-a "$s-eager-m.mgt" --measured-b "$s-sdpa-m.mgt" \
    > "$W/res/script.txt" 2>&1
  echo "  exit $?" | tee -a "$log"
  head -n 30 "$W/res/script.txt" | tee -a "$log"
fi
if has 5; then
  step "what each API selection records of the host's waits"
  t 90 $py scripts/gpu/measured_pass.py syncs --out "$W/res" 2>&1 | tail -n 5 | tee -a "$log"
fi

step "summary"
$py - "$W/res" > "$OUT/summary.txt" <<'EOF'
import json, statistics, sys
from pathlib import Path
res = Path(sys.argv[1])
for w in ("mlp", "gpt2-1x64", "gpt2-8x512"):
    f = res / f"{w}-overhead.json"
    if not f.exists():
        continue
    o = json.loads(f.read_text())
    dev = None
    sf = res / f"{w}-self.json"
    host = None
    if sf.exists() and sf.stat().st_size:
        acc = json.loads(sf.read_text())["runs"]["a"].get("per_iteration") or {}
        dev, host = acc.get("seconds"), acc.get("host_seconds")
    ev = o["median_event_ms"]
    print(f"{w} rows per mode: {o.get('rows')}")
    print(f"{w}: {o['steps_per_run']} steps/run; api rows measured {o['measured_run'].get('api_calls')} "
          f"{o['measured_run'].get('api_names')}, ranges {o['measured_run'].get('ranges')}, "
          f"api-all {o['api_all_run'].get('api_calls')}")
    for m, ms in o["median_wall_ms"].items():
        print(f"  {m:<10} median {ms:8.3f} ms ({o['overhead_pct'][m]:+6.1f}%)  fastest {o['fastest_wall_ms'][m]:8.3f} "
              f"({o['fastest_overhead_pct'][m]:+6.1f}%)  event {ev[m]:8.3f}")
    for m, ms in o.get("median_untraced_ms", {}).items():
        print(f"  {m:<10} untraced steps median {ms:8.3f} ms ({o['untraced_overhead_pct'][m]:+6.1f}%)")
    if dev:
        print(f"  device time per iteration in the last measured pass {dev * 1e3:.3f} ms, host period {host} s "
              f"(its own event time {ev.get('measured', float('nan')):.3f}, plain {ev['plain']:.3f})")
inj = res / "injection.txt"
if inj.exists():
    by = {}
    for line in inj.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "LOOP_MS":
            by.setdefault(parts[0], []).append(float(parts[2]))
    print("loops, one process per group (median, fastest, n):",
          {k: (round(statistics.median(v), 4), round(min(v), 4), len(v)) for k, v in by.items()})
t = res / "truth.json"
if t.exists():
    tr = json.loads(t.read_text())
    print("truth:", {v: (tr[v]["j_per_iter"], tr[v]["s_per_iter"]) for v in ("eager", "sdpa")},
          "saving %", tr.get("saving_pct"))
p = res / "pair.json"
if p.exists() and p.stat().st_size:
    d = json.loads(p.read_text())
    for side in "ab":
        acc = d["runs"][side].get("per_iteration") or {}
        print(f"pair {side}: per iteration {acc.get('total')} {acc.get('unit')} in {acc.get('seconds')} s "
              f"(host {acc.get('host_seconds')}), matched share {acc.get('matched_share')}, waiting {acc.get('waiting')}, "
              f"untraced {d['runs'][side].get('untraced')}")
    for f in d["findings"][:4]:
        print(f"  {f['verdict']} [{f['evidence_class']}] {f['label'][:80]} a={f['a']['joules']} b={f['b']['joules']} "
              f"saved%={f['saved_pct_of_run']:.1f}")
EOF
cat "$OUT/summary.txt"
(cd "$W" && tar czf "$OUT/results.tgz" res)
(cd "$W/runs" && tar cJf "$OUT/pair-runs.tar.xz" eager.mgt eager-m.mgt sdpa.mgt sdpa-m.mgt 2>/dev/null)
(cd "$W/runs" && tar cJf "$OUT/script-runs.tar.xz" script-*.mgt mlp-rec.mgt mlp-m.mgt 2>/dev/null)
fit "$OUT/pair-runs.tar.xz" "$OUT/script-runs.tar.xz"
ls -la "$OUT" | tee -a "$log"
