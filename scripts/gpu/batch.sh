#!/usr/bin/env bash
# Several GPU experiments in one device call (each call pays the machine's start):
#   scripts/gpu/batch.sh STEP...      STEP = script:seconds[:VAR=value,VAR=value]
#   e.g. OUT=$OUT scripts/gpu/batch.sh overhead.sh:200:ROUNDS=3 jax.sh:150 replay.sh:200:REPLAY_BUDGET_S=130
# Each script runs with OUT=$OUT/<script name>, BUDGET=seconds and the given variables,
# under `timeout seconds+30`; its output goes to $OUT/<name>.log. At the end everything
# is packed into $OUT/results.tgz (files back from the device are limited to 8) and the
# tail of each log is printed. Also writes gpu.txt (nvidia-smi) and doctor.txt first.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/batch-out}
mkdir -p "$OUT/steps"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,temperature.gpu,clocks.sm --format=csv \
  > "$OUT/steps/gpu.txt" 2>&1
source scripts/gpu_env.sh
gpu_build magneton magneton_cupti magneton_torch magneton_energy_py > "$OUT/steps/build.log" 2>&1
timeout 30 build-gpu/magneton doctor > "$OUT/steps/doctor.txt" 2>&1
for spec in "$@"; do
  IFS=: read -r script secs vars <<< "$spec"
  name=${script%.sh}
  echo "== $script (${secs} s) $(date -u +%H:%M:%S)"
  (
    IFS=, ; for v in $vars; do export "$v"; done
    OUT="$OUT/steps/$name" BUDGET=$secs NO_BUILD=1 timeout -k 5 $(( secs + 30 )) bash "scripts/gpu/$script"
  ) > "$OUT/steps/$name.log" 2>&1
  echo "   exit $?"
done
(cd "$OUT" && tar czf results.tgz steps && rm -rf steps/*/ 2>/dev/null)
for spec in "$@"; do
  name=$(basename "${spec%%:*}" .sh)
  echo "---- $name"; tail -n 25 "$OUT/steps/$name.log"
done
