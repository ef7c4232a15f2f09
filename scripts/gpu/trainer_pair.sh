#!/usr/bin/env bash
# A Transformers Trainer script through the one-command route on the GPU
# machine (issue 22): the steps loop inside the installed library, found by
# sampling the stack, then named with --step-line as the command's hint says.
#  1. scripts/gpu/trainer_script.py plain, each optimizer (Trainer's own time per step);
#  2. `python -m magneton record` with no option (the loop found by sampling; its hint);
#  3. both sides again with the hint's --step-line, and `magneton diff` of the
#     pair (expect `operators` waste on adamw_torch: foreach AdamW against the
#     fused kernel) and of the sampled pair.
# Files back in $OUT: log.txt, summary.txt, runs.tar.xz.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/trainer_pair.sh
#   BUDGET seconds (default 300), STEPS (default 300)
# GPU_DRY=1: the same on the CPU with a tiny model and build/magneton:
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/tp scripts/gpu/trainer_pair.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/trainer-pair-out}
BUDGET=${BUDGET:-300}
STEPS=${STEPS:-300}
outputs tp
if [ "${GPU_DRY:-0}" = 1 ]; then
  M=$PWD/build/magneton tiny=(--tiny) STEPS=120
else
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$log" 2>&1 || { echo "build failed"; exit 1; }
  M=$PWD/build-gpu/magneton tiny=()
fi
script=scripts/gpu/trainer_script.py
optims=(adamw_torch adamw_torch_fused)

step "1. plain, $STEPS steps each"
for o in "${optims[@]}"; do
  t 120 $py $script "$W/o" --optim $o --steps "$STEPS" "${tiny[@]}" 2>>"$log" | tail -n 1 | sed 's/^/plain: /' | tee -a "$summary"
done

step "2. one-command route, the loop found by sampling"
for o in "${optims[@]}"; do
  t 150 $py -m magneton record -v -f -o "$W/s-$o.mgt" $script "$W/o" --optim $o --steps "$STEPS" "${tiny[@]}" \
    > "$W/s-$o.txt" 2>&1
  echo "route $o exit $?" | tee -a "$summary"
  grep '^magneton' "$W/s-$o.txt" | sed 's/^/  /' | tee -a "$summary"
done
line=$(grep -ho -- '--step-line [^ ]*' "$W"/s-*.txt | head -n 1 | cut -d' ' -f2)
echo "hint: --step-line ${line:-none}" | tee -a "$summary"

step "3. both sides with --step-line $line"
for o in "${optims[@]}"; do
  t 150 $py -m magneton record -v -f -o "$W/l-$o.mgt" --step-line "${line:-0}" $script "$W/o" --optim $o \
    --steps "$STEPS" "${tiny[@]}" > "$W/l-$o.txt" 2>&1
  echo "route $o exit $?" | tee -a "$summary"
  grep '^magneton' "$W/l-$o.txt" | sed 's/^/  /' | tee -a "$summary"
done
for k in l s; do
  t 60 "$M" diff "$W/$k-${optims[0]}.mgt" "$W/$k-${optims[1]}.mgt" --color never > "$W/diff-$k.txt" 2>&1
  echo "diff ($k) exit $?" | tee -a "$summary"
  grep -v '^  note' "$W/diff-$k.txt" | head -n 24 | tee -a "$summary"
done

step "summary"
cat "$summary"
cp "$W"/*.txt "$OUT/" 2>/dev/null
(cd "$W" && tar -cJf "$OUT/runs.tar.xz" ./*.mgt 2>/dev/null) && fit "$OUT/runs.tar.xz"
ls -la "$OUT"
