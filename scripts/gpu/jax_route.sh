#!/usr/bin/env bash
# The one-command route on a JAX script, on the GPU machine, in one device call
# (tests/data/jax_train/train.py: a jitted, donating training step whose
# embedding is a one-hot matrix product (a) or a lookup (b)):
#  1. plain, alternated over 2 rounds: each side's own ms per step (the ground truth in time);
#  2. `python -m magneton record -o X.mgt train.py ...` for each side and for b again (A/A),
#     then `magneton diff a b` and `magneton diff b b2` (tables and JSON).
# Files back in $OUT: log.txt, summary.txt, results.tgz, runs.tar.xz.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/jax_route.sh
#   BUDGET seconds (default 240), ARGS (default: --vocab 32768 --batch 64 --iters 12000: over a second of steps on each side, for the energy counter)
# GPU_DRY=1: the same on the CPU with the script's own sizes and build/magneton.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/jax-route-out}
BUDGET=${BUDGET:-240}
outputs jax-route
if [ "${GPU_DRY:-0}" = 1 ]; then
  M=$PWD/build/magneton args=(${ARGS:---iters 40})
else
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$log" 2>&1 || { echo "build failed"; exit 1; }
  M=$PWD/build-gpu/magneton args=(${ARGS:---vocab 32768 --batch 64 --iters 12000})
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$summary"
fi
S=tests/data/jax_train/train.py
embed() { [ "$1" = a ] && echo onehot || echo take; }

step "1. plain, alternated (ground truth)"
for round in 1 2; do
  for s in a b; do
    t 60 $py $S "${args[@]}" --embed "$(embed $s)" --time 2>/dev/null | tail -n 1 |
      sed "s/^/plain $s round $round: /" | tee -a "$summary"
  done
done

step "2. the one-command route"
for s in a b b2; do
  t 120 $py -m magneton record -v -f -o "$W/$s.mgt" $S "${args[@]}" --embed "$(embed ${s:0:1})" > "$W/$s.txt" 2>&1
  echo "route $s exit $?: $(grep -h 'magneton:' "$W/$s.txt" | tr '\n' ' ')" | tee -a "$summary"
done
for pair in "a b" "b b2"; do
  set -- $pair
  t 60 "$M" diff "$W/$1.mgt" "$W/$2.mgt" > "$W/diff-$1-$2.txt" 2>&1
  echo "diff $1 $2 exit $?" | tee -a "$summary"
  t 60 "$M" diff "$W/$1.mgt" "$W/$2.mgt" --json > "$W/diff-$1-$2.json" 2>> "$log"
  grep -E "^  [ab] =|matched|as the programs run|^ *1 |^     [a-z]|waste found|could be saved" "$W/diff-$1-$2.txt" |
    head -n 12 | tee -a "$summary"
done

step "summary"
cat "$summary"
(cd "$W" && tar -czf "$OUT/results.tgz" ./*.txt ./*.json 2>/dev/null)
# A killed recording keeps its rows in the -wal file beside it.
(cd "$W" && tar -cJf "$OUT/runs.tar.xz" $(ls ./*.mgt ./*.mgt-wal 2>/dev/null)) && fit "$OUT/runs.tar.xz"
ls -la "$OUT"
