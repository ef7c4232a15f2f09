#!/usr/bin/env bash
# Eager against compiled, and the diff's and the JAX recorder's time on large
# runs, on the GPU machine (docs/diff.md "Eager against compiled",
# docs/benchmarks.md "Diff" and "JAX recorder"), in one device call:
#  1. record_jax's time against `repeat` (30, 100, 300 executions of an 8-layer
#     MLP, eager and under jax.jit, kernels traced): bench/jax_record_bench.py;
#     the time per execution outside the program's own run should not grow;
#  2. the dispatch pairs of tests/data/dispatch/make_fixtures.py at GPU sizes
#     (8 layers, width 1024, batch 64, 300 executions / measured iterations,
#     NVML energy): JAX without and with jax.jit, the eager function recorded
#     twice (A/A), PyTorch eager and torch.compile; `magneton diff` of each:
#     expected one finding of class dispatch on the eager side for the two
#     eager/compiled pairs, no waste for the A/A pair;
#  3. run pairs of ~100k operators with their kernels (bench/record_diff_pairs.py
#     --device cuda) and the wall time of `magneton diff` on each: at most 10 s.
# The GPT-2 eager/sdpa pair where identical LM-head kernels were attributed
# different energy is step 3 of scripts/gpu/measured_pass.sh (STEPS=3).
# Prints a table; files back in $OUT: log.txt, summary.txt, results.tgz (diff
# tables and JSON), dispatch-runs.tar.xz (the run files of 2).
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/dispatch.sh
#   BUDGET seconds (default 560), STEPS (default "1 2 3")
# GPU_DRY=1: the same steps on a CPU with small sizes and a build in build/ (a few minutes):
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/dispatch-dry scripts/gpu/dispatch.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/dispatch-out}
BUDGET=${BUDGET:-560}
STEPS=${STEPS:-"1 2 3"}
mkdir -p "$OUT"
log="$OUT/log.txt"
summary="$OUT/summary.txt"
: > "$log"
: > "$summary"
W=$(mktemp -d /tmp/dispatch.XXXX)
mkdir -p "$W/res" "$W/disp" "$W/pairs"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python XLA_PYTHON_CLIENT_PREALLOCATE=false
py=${MAGNETON_PYTHON:-python3}
has() { [[ " $STEPS " == *" $1 "* ]]; }

dry=${GPU_DRY:-0}
if [ "$dry" = 1 ]; then
  M=$PWD/build/magneton
  dev=cpu energy=none repeats=10,30 size=(--layers 4 --width 64 --batch 8) repeat=5 ops=5000
  export JAX_PLATFORMS=cpu
else
  step "binaries"
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$log" 2>&1 || { echo "build failed"; exit 1; }
  M=$PWD/build-gpu/magneton
  dev=cuda energy=nvml repeats=30,100,300 size=(--layers 8 --width 1024 --batch 64) repeat=300 ops=100000
  nvidia-smi --query-gpu=name,driver_version,power.draw,temperature.gpu,clocks.sm --format=csv >> "$log" 2>&1
fi

# top FILE.json: verdict, class, costly side and label of the first finding, and the waste count.
top() {
  "$py" - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["findings"][0] if d["findings"] else None
waste = sum(x["verdict"] == "waste" for x in d["findings"])
print(f"{waste} waste; top: " + (f"{f['verdict']} [{f['evidence_class']}] {f['costly']} costlier by "
      f"{f['cost_delta_pct']:.0f}% ({d['unit']}): {f['label'][:90]}" if f else "none"))
EOF
}

if has 1; then
  step "1. record_jax against repeat ($repeats, $dev)"
  t 200 "$py" bench/jax_record_bench.py --device $dev --repeats $repeats 2>&1 | tee "$W/res/record-scaling.txt" >> "$log"
  { echo "record_jax against repeat:"; cat "$W/res/record-scaling.txt"; } >> "$summary"
fi

if has 2; then
  step "2. eager against compiled (${size[*]}, repeat $repeat, $dev, energy $energy)"
  for sides in jax torch; do
    t 180 "$py" tests/data/dispatch/make_fixtures.py "$W/disp" "${size[@]}" --repeat $repeat --device $dev \
      --energy $energy --sides $sides >> "$log" 2>&1 || echo "recording $sides failed, exit $?" | tee -a "$log"
  done
  pair() {  # name a b [measured-a measured-b]
    local name=$1 a=$2 b=$3 extra=()
    [ $# -ge 5 ] && extra=(--measured-a "$W/disp/$4.mgt" --measured-b "$W/disp/$5.mgt")
    t 60 "$M" diff "$W/disp/$a.mgt" "$W/disp/$b.mgt" "${extra[@]}" > "$W/res/diff-$name.txt" 2>&1
    t 60 "$M" diff "$W/disp/$a.mgt" "$W/disp/$b.mgt" "${extra[@]}" --json > "$W/res/diff-$name.json" 2>>"$log"
    echo "$name: $(top "$W/res/diff-$name.json" 2>&1)" | tee -a "$summary" >> "$log"
  }
  pair jax-eager-jit jax_eager jax_jit
  pair jax-eager-aa jax_eager jax_eager_again
  pair torch-eager-compiled torch_eager torch_compiled torch_eager-measured torch_compiled-measured
  (cd "$W/disp" && tar -cJf "$OUT/dispatch-runs.tar.xz" ./*.mgt) && fit "$OUT/dispatch-runs.tar.xz"
fi

if has 3; then
  step "3. diff time on ~$ops-operator pairs ($dev)"
  t 300 "$py" bench/record_diff_pairs.py "$W/pairs" --ops $ops --device $dev 2>&1 | tee -a "$log" > "$W/res/pairs.txt"
  timed_diff() {  # name a b [measured-a measured-b]
    local name=$1 a=$2 b=$3 extra=() t0 t1
    [ $# -ge 5 ] && extra=(--measured-a "$W/pairs/$4.mgt" --measured-b "$W/pairs/$5.mgt")
    t0=$(date +%s%N)
    t 120 "$M" diff "$W/pairs/$a.mgt" "$W/pairs/$b.mgt" "${extra[@]}" --json > "$W/res/diff-$name.json" 2>>"$log"
    local rc=$?
    t1=$(date +%s%N)
    echo "$name: magneton diff exit $rc in $(( (t1 - t0) / 1000000 )) ms; $(top "$W/res/diff-$name.json" 2>&1)" |
      tee -a "$summary" >> "$log"
  }
  { echo "pairs:"; cat "$W/res/pairs.txt"; } >> "$summary"
  timed_diff jax-mlp-100k jax_mlp_eager jax_mlp_jit
  timed_diff torch-gpt2-100k torch_gpt2_gelu_new torch_gpt2_gelu_fused torch_gpt2_gelu_new-measured \
    torch_gpt2_gelu_fused-measured
fi

(cd "$W/res" && tar -czf "$OUT/results.tgz" .)
fit "$OUT/results.tgz"
step "done"
cat "$summary"
