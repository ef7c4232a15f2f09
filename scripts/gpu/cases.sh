#!/usr/bin/env bash
# The known-inefficiency suite on the GPU machine (issue 9), in one device call:
#  1. builds the magneton CLI, the recorder extensions (python/magneton/_torch, _energy) and the
#     CUPTI injection library in build-gpu, and compiles cases/cublas-engine/engine.cu;
#  2. ground truth: every case, each side alone in back-to-back loops, alternated over
#     trials, energy from NVML's counter (cases/groundtruth.py);
#  3. records both sides of every case, diffs them, compares the top finding with the
#     expectation and writes RESULTS.md (cases/run_all.py).
# Files back in $OUT (6): build.log, groundtruth.txt, groundtruth.json, run_all.txt,
# RESULTS.md, runs.tar.xz (cases/<case>/runs/ of this call's cases: packed run files, provenance.json
# and diff.json to commit; unpack from the repository root with `tar -xJf runs.tar.xz`; past
# RUNS_CAP_MIB the largest cases' run files stay behind, and the log names them).
#
#   scripts/gpu/cases.sh [--groundtruth-only | --groundtruth FILE] [--seconds 1.5] [--trials 3]
#                        [--cases a,b] [--replay] [--no-aa] [--diff-args '--threshold 5']
# --no-aa: no A/A run (each case's wasteful side recorded a second time; cases/README.md).
# CASE_TIMEOUT: seconds allowed to each recording and diff (default 120; a case whose step is
# many training steps, item-per-step's ten GPT-2 steps, fingerprints them all in its recording pass).
# --groundtruth FILE: measure no ground truth; record and diff against FILE's
# (e.g. cases/groundtruth-h200.json from an earlier call).
#
# Whole script: at most ~9 minutes (BUDGET seconds, default 530); cases that would
# start past it are reported as not run, and every command's timeout is cut to what
# is left. Estimate on the H200 with .gpubin carried (no build): engine.cu ~15 s;
# ground truth ~15-20 s per case (start-up, 2 x 0.3 s warm-up, 2 x trials x seconds
# of windows) = ~6 min for the 21 cases that run; recording ~10-15 s per run, three
# runs a case (both sides and the A/A run) plus two diffs = ~45-60 s a case, ~20 min
# for the suite. So one call holds the ground truth of all cases (--groundtruth-only)
# or the recordings of ~8 cases: split with --cases (or cases_update.sh) over
# several calls; run_all reports the cases past the budget as not run.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/cases.sh
# GPU_DRY=1: the same steps on a CPU machine (--device cpu --small, 0.2 s windows,
# 1 trial, run files under /tmp/cases-dry instead of cases/*/runs; engine.cu is
# compiled if nvcc is there; the gpu_only cases are skipped), to try this script
# off the GPU machine (about 4-5 minutes on a loaded 2-core CPU machine; BUDGET 900):
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/dry-cases scripts/gpu/cases.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/cases-out}
mkdir -p "$OUT"
dry=${GPU_DRY:-0}
if [ "$dry" = 1 ]; then BUDGET=${BUDGET:-900}; else BUDGET=${BUDGET:-530}; fi

mode=full seconds=1.5 trials=3 cases="" replay="" no_aa="" diff_args="" gt_file=""
dev=cuda small=() runs_root=$PWD
if [ "$dry" = 1 ]; then
  seconds=0.2 trials=1 dev=cpu small=(--small) runs_root=/tmp/cases-dry
  rm -rf "$runs_root"; mkdir -p "$runs_root/cases"
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --groundtruth-only) mode=groundtruth ;;
    --groundtruth) gt_file=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --trials) trials=$2; shift ;;
    --cases) cases=$2; shift ;;
    --replay) replay=--replay ;;
    --no-aa) no_aa=--no-aa ;;
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
export PATH=${CUDA_HOME:-/usr/local/cuda}/bin:$PATH
if [ "$dry" != 1 ]; then
  command -v nvcc >/dev/null || missing+=" nvcc"
  # As groundtruth.py loads it (the driver's libraries may be mounted outside /usr/lib).
  python3 -c "import ctypes; ctypes.CDLL('libnvidia-ml.so.1')" 2>/dev/null || missing+=" libnvidia-ml.so.1"
fi
if [ -n "$missing" ]; then echo "cases.sh: missing on this machine:$missing" | tee "$OUT/build.log"; exit 2; fi
timeout -k 5 60 python3 -c "import torch, jax; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu'); print('jax', jax.__version__, jax.devices())"

step "building (build-gpu)"
: > "$OUT/build.log"
engine=build-gpu/cases/engine
mkdir -p build-gpu/cases
# The rpath: the loader may not know the toolkit's lib64 (libcublas.so.13).
if ! command -v nvcc >/dev/null; then
  echo "cases.sh: no nvcc; engine.cu not compiled" | tee -a "$OUT/build.log"
elif ! timeout -k 5 120 nvcc -O2 -std=c++17 -o "$engine" cases/cublas-engine/engine.cu -lcublas -ldl \
    -Xlinker -rpath -Xlinker "$(dirname "$(dirname "$(command -v nvcc)")")/lib64" >> "$OUT/build.log" 2>&1; then
  echo "cases.sh: engine.cu did not compile (see build.log); cublas-engine will fail"
else
  ! ldd "$engine" | grep "not found" || echo "cases.sh: the engine's libraries are not all found"
  if [ "$dry" = 1 ]; then  # no GPU: it must start, read its arguments and stop at cuBLAS (exit 3)
    timeout -k 5 30 "$engine" --compute fp32 --iters 1 --warmup 1 >> "$OUT/build.log" 2>&1
    echo "cases.sh: the engine without a GPU: exit $? (3 expected)" | tee -a "$OUT/build.log"
  fi
fi
export CASES_ENGINE=$PWD/$engine
if [ $mode = full ]; then
  # Only what the suite needs: the CLI, the torch recorder, the CUPTI injection library, magneton._energy.
  gpu_build magneton magneton_torch magneton_cupti magneton_energy_py >> "$OUT/build.log" 2>&1 ||
    echo "cases.sh: build failed (tail of build.log below)"
  tail -n 5 "$OUT/build.log"
  [ -x build-gpu/magneton ] || echo "cases.sh: build-gpu/magneton is missing; run_all will report every case as not run"
fi

if [ -n "$gt_file" ]; then
  step "ground truth: $gt_file (not measured)"
  cp "$gt_file" "$OUT/groundtruth.json" || { echo "cases.sh: cannot read $gt_file"; exit 2; }
else
step "ground truth"
# In the full mode, keep ~200 s for recording and diffing 26 runs.
if [ $mode = full ]; then gt_budget=$(( $(left) - 200 )); else gt_budget=$(( $(left) - 10 )); fi
[ "$gt_budget" -lt 120 ] && gt_budget=120
[ "$gt_budget" -gt $(( $(left) - 30 )) ] && gt_budget=$(( $(left) - 30 ))
[ "$gt_budget" -lt 20 ] && gt_budget=20
# groundtruth.json is rewritten after every case, so a killed call still returns what was measured.
timeout -k 5 $(( gt_budget + 30 )) python3 -u cases/groundtruth.py --out "$OUT" --seconds "$seconds" --trials "$trials" \
  --warm 0.3 --budget "$gt_budget" --timeout 120 --device $dev "${small[@]}" ${cases:+--cases "$cases"} 2>&1 |
  tee "$OUT/groundtruth.txt"
fi

if [ $mode = full ]; then
  step "recording and diffing every case"
  # run_all cuts each command's timeout to its budget; the outer timeout is the backstop.
  rb=$(( $(left) - 15 )); [ "$rb" -lt 30 ] && rb=30
  PYTHONPATH=$PWD/python timeout -k 5 $(( rb + 10 )) python3 -u cases/run_all.py --groundtruth "$OUT/groundtruth.json" \
    --magneton build-gpu/magneton --results "$OUT/RESULTS.md" --budget $rb --device $dev "${small[@]}" \
    --runs-root "$runs_root/cases" --timeout "${CASE_TIMEOUT:-120}" $replay $no_aa --diff-args "$diff_args" ${cases:+--cases "$cases"} 2>&1 |
    tee "$OUT/run_all.txt"
  # One archive of this call's cases (the others' runs are committed already),
  # split only if it must (files back are limited to 8, 16 MiB each: 5 other
  # files + at most 3 parts). Each case's run files are packed in its own
  # runs.tar.xz; past RUNS_CAP_MIB (45) the largest are left out, their diffs kept.
  cap=$((${RUNS_CAP_MIB:-45} * 1024 * 1024)) total=0 files=() left_out=()
  while read -r size pack; do
    if [ $((total + size)) -le $cap ]; then files+=("$pack"); total=$((total + size)); else left_out+=("$pack"); fi
  done < <(cd "$runs_root" && for d in cases/*/runs; do
             name=${d#cases/}; name=${name%/runs}
             [ -n "$cases" ] && [[ ",$cases," != *",$name,"* ]] && continue
             ls "$d"/*.json 2>/dev/null | sed 's/^/0 /'
             [ -f "$d/runs.tar.xz" ] && echo "$(stat -c %s "$d/runs.tar.xz") $d/runs.tar.xz"
           done | sort -n)
  if [ ${#files[@]} -gt 0 ] && (cd "$runs_root" && tar -I 'xz -T0 -6' -cf "$OUT/runs.tar.xz" "${files[@]}"); then
    for f in "${left_out[@]}"; do
      echo "cases.sh: $f left out ($(( $(stat -c %s "$runs_root/$f") / 1048576 )) MiB; past the ${RUNS_CAP_MIB:-45} MiB cap): its diffs came back"
    done
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
