#!/usr/bin/env bash
# A decoding loop over a growing sequence on the GPU machine, in one device call:
# scripts/gpu/decode_script.py without (a) and with (b) the KV cache,
#  1. plain, alternated over 2 rounds: the loop's own ms per token (the ground truth);
#  2. the one-command route (`python -m magneton record -o X.mgt decode_script.py ...`)
#     for each side, then `magneton diff a.mgt b.mgt` (table and JSON);
#  3. the no-code-change route (`magneton record -o X.mgt -- python decode_script.py ...`),
#     then `magneton diff` of the kernel-level pair.
# Files back in $OUT: log.txt, summary.txt, results.tgz (tables, JSON), runs.tar.xz.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/decode_pair.sh
#   BUDGET seconds (default 300), TOKENS (default 256)
# GPU_DRY=1: the same on the CPU with a 2-layer model and build/magneton:
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/dp scripts/gpu/decode_pair.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/decode-pair-out}
BUDGET=${BUDGET:-300}
TOKENS=${TOKENS:-256}
outputs decode
if [ "${GPU_DRY:-0}" = 1 ]; then
  M=$PWD/build/magneton args=(--tiny --tokens 24) kernel_route=0
else
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$log" 2>&1 || { echo "build failed"; exit 1; }
  M=$PWD/build-gpu/magneton args=(--tokens "$TOKENS") kernel_route=1
fi
S=scripts/gpu/decode_script.py
side_args() { [ "$1" = b ] && echo --cache; }

step "1. plain, alternated (ground truth)"
for round in 1 2; do
  for s in a b; do
    t 60 $py $S "${args[@]}" $(side_args $s) 2>/dev/null | tail -n 1 | sed "s/^/plain $s round $round: /" | tee -a "$summary"
  done
done

step "2. the one-command route"
for s in a b; do
  t 150 $py -m magneton record -v -f -o "$W/route-$s.mgt" $S "${args[@]}" $(side_args $s) > "$W/route-$s.txt" 2>&1
  echo "route $s exit $?: $(grep -h 'step loop\|magneton: record:' "$W/route-$s.txt" | head -n 2 | tr '\n' ' ')" | tee -a "$summary"
done
t 90 "$M" diff "$W/route-a.mgt" "$W/route-b.mgt" > "$W/route-diff.txt" 2>&1
echo "route diff exit $?" | tee -a "$summary"
t 90 "$M" diff "$W/route-a.mgt" "$W/route-b.mgt" --json > "$W/route-diff.json" 2>> "$log"
grep -E "^  [ab] (=|per)|matched|shapes change|^ *1 |^     [a-z]|\[launch\]|\[operators\]|waste found|could be saved" "$W/route-diff.txt" \
  | head -n 24 | tee -a "$summary"

if [ "$kernel_route" = 1 ]; then
  step "3. the no-code-change route (kernels)"
  for s in a b; do
    t 150 "$M" record -f -o "$W/kernels-$s.mgt" -- $py $S "${args[@]}" $(side_args $s) > "$W/kernels-$s.txt" 2>&1
    echo "kernel route $s exit $?: $(tail -n 1 "$W/kernels-$s.txt")" | tee -a "$summary"
  done
  t 90 "$M" diff "$W/kernels-a.mgt" "$W/kernels-b.mgt" > "$W/kernels-diff.txt" 2>&1
  echo "kernel diff exit $?" | tee -a "$summary"
  head -n 40 "$W/kernels-diff.txt" | tee -a "$summary"
fi

step "summary"
cat "$summary"
(cd "$W" && tar -czf "$OUT/results.tgz" ./*.txt ./*.json 2>/dev/null)
# A killed recording keeps its rows in the -wal file beside it.
(cd "$W" && tar -cJf "$OUT/runs.tar.xz" $(ls ./*.mgt ./*.mgt-wal 2>/dev/null)) && fit "$OUT/runs.tar.xz"
ls -la "$OUT"
