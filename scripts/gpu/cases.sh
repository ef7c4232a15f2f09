#!/usr/bin/env bash
# The known-inefficiency suite on the GPU machine (issue 9), in one device call:
#  1. builds the magneton CLI, the recorder extensions (python/magneton/_torch, _energy) and the
#     CUPTI injection library in build-gpu, and compiles cases/cublas-engine/engine.cu;
#  2. ground truth: every case, each side alone in back-to-back loops, alternated over
#     trials, energy from NVML's counter (cases/groundtruth.py);
#  3. records both sides of every case, diffs them, compares the top finding with the
#     expectation and writes RESULTS.md (cases/run_all.py).
# Files back in $OUT (6): build.log, groundtruth.txt, groundtruth.json, run_all.txt,
# RESULTS.md, runs.tar.xz (cases/<case>/runs/: the run files and diff.json to commit;
# unpack from the repository root with `tar -xJf runs.tar.xz`).
#
#   scripts/gpu/cases.sh [--groundtruth-only] [--seconds 1.5] [--trials 3] [--cases a,b] [--replay]
#                        [--diff-args '--threshold 5']
#
# Whole script: at most ~9 minutes (BUDGET seconds, default 530); cases that would
# start past it are reported as not run.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/cases-out}
mkdir -p "$OUT"
BUDGET=${BUDGET:-530}

mode=full seconds=1.5 trials=3 cases="" replay="" diff_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --groundtruth-only) mode=groundtruth ;;
    --seconds) seconds=$2; shift ;;
    --trials) trials=$2; shift ;;
    --cases) cases=$2; shift ;;
    --replay) replay=--replay ;;
    --diff-args) diff_args=$2; shift ;;
    *) echo "cases.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
left() { echo $(( BUDGET - ($(date +%s) - start) )); }
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }

step "checking the machine"
missing=""
python3 -c "import torch, transformers, jax, numpy" 2>/dev/null || missing+=" python3(torch/transformers/jax/numpy)"
export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || missing+=" nvcc"
[ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ] || [ -e /usr/lib/libnvidia-ml.so.1 ] || missing+=" libnvidia-ml.so.1"
if [ -n "$missing" ]; then echo "cases.sh: missing on this machine:$missing" | tee "$OUT/build.log"; exit 2; fi
python3 -c "import torch, jax; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0)); print('jax', jax.__version__)"

step "building (build-gpu)"
: > "$OUT/build.log"
engine=build-gpu/cases/engine
mkdir -p build-gpu/cases
if ! nvcc -O2 -std=c++17 -o "$engine" cases/cublas-engine/engine.cu -lcublas -ldl >> "$OUT/build.log" 2>&1; then
  echo "cases.sh: engine.cu did not compile (see build.log); cublas-engine will fail"
fi
export CASES_ENGINE=$PWD/$engine
if [ $mode = full ]; then
  # Only what the suite needs: the CLI, the torch recorder, the CUPTI injection library, magneton._energy.
  gpu_build magneton magneton_torch magneton_cupti magneton_energy_py >> "$OUT/build.log" 2>&1 ||
    echo "cases.sh: build failed (tail of build.log below)"
  tail -n 5 "$OUT/build.log"
  [ -x build-gpu/magneton ] || echo "cases.sh: build-gpu/magneton is missing; run_all will report every case as not run"
fi

step "ground truth"
# In the full mode, keep ~200 s for recording and diffing 26 runs.
if [ $mode = full ]; then gt_budget=$(( $(left) - 200 )); else gt_budget=$(( $(left) - 10 )); fi
[ "$gt_budget" -lt 120 ] && gt_budget=120
python3 cases/groundtruth.py --out "$OUT" --seconds "$seconds" --trials "$trials" --warm 0.3 \
  --budget "$gt_budget" ${cases:+--cases "$cases"} 2>&1 | tee "$OUT/groundtruth.txt"

if [ $mode = full ]; then
  step "recording and diffing every case"
  PYTHONPATH=$PWD/python python3 cases/run_all.py --groundtruth "$OUT/groundtruth.json" \
    --magneton build-gpu/magneton --results "$OUT/RESULTS.md" --budget $(( $(left) - 15 )) \
    --timeout 120 $replay --diff-args "$diff_args" ${cases:+--cases "$cases"} 2>&1 | tee "$OUT/run_all.txt"
  # One archive (files back are limited to 8, 16 MiB each): split only if it must.
  if tar -I 'xz -T0 -6' -cf "$OUT/runs.tar.xz" cases/*/runs 2>/dev/null; then
    if [ "$(stat -c %s "$OUT/runs.tar.xz")" -gt $((15 * 1024 * 1024)) ]; then
      split -b 15M -d "$OUT/runs.tar.xz" "$OUT/runs.tar.xz.part" && rm "$OUT/runs.tar.xz"
      echo "cases.sh: runs.tar.xz split in parts (cat runs.tar.xz.part* | tar -xJ)"
    fi
  else
    echo "cases.sh: no run files to pack"
  fi
  ls -la "$OUT"
fi
step "done"
