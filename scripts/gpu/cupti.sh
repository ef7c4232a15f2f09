#!/usr/bin/env bash
# Kernel tracing on the GPU machine (issue 4), in one device call (<= 4 min;
# every step after the build has its own timeout <= 60 s and is skipped when
# the 4 minutes run short, so one hang cannot eat the whole run):
#  1. builds the magneton command and libmagneton_cupti.so in build-gpu;
#  1b. sanity: a tiny torch program (10 matmuls) under `magneton record`, then
#     under `magneton record --only-ranges magneton:`: kernels, NVTX ranges,
#     exit status and process time of each, to pinpoint what works;
#  2. torch GPT-2 forward loop (transformers GPT2Config, random weights, batch 8,
#     seq 128, 20 iterations inside an NVTX range "magneton:loop"): kernel count
#     from torch.profiler vs `magneton record --only-ranges magneton:`;
#     emit_nvtx operator ranges; `magneton top` by kernel and by range;
#  3. a small JAX jit loop under `magneton record`;
#  4. (recording overhead has its own script: scripts/gpu/overhead.sh)
#  5. a small raw activity dump (MAGNETON_CUPTI_DUMP) of a 2-layer GPT-2 and of
#     the JAX loop, and the small run file, for tests/data/cupti/.
# Files back in $OUT (6): summary.txt (the table), log.txt, top.txt,
# cupti-gpt2.bin, cupti-jax.bin, gpt2-small.mgt.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
OUT=${OUT:-/tmp/cupti-out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
: > "$LOG"
[ -f scripts/gpu_env.sh ] && source scripts/gpu_env.sh
GPU_CMAKE_ARGS=${GPU_CMAKE_ARGS:-"-DPython_EXECUTABLE=$(command -v python3) -DMAGNETON_TESTS=OFF -DMAGNETON_BENCH=OFF"}
PY=${PYTHON:-python3}
BUILD=${BUILD:-build-gpu}
WORK=/tmp/magneton-cupti
rm -rf "$WORK" && mkdir -p "$WORK"
declare -a ROWS
row() { ROWS+=("$(printf '%-34s %s' "$1" "$2")"); echo "-- $1: $2" | tee -a "$LOG"; }
step() { echo "== $* ($(( $(date +%s) - start )) s)" | tee -a "$LOG"; }
BUDGET=${BUDGET:-235}  # seconds for the whole script
# A step's timeout: 60 s, or what is left of the budget; 0 when too little is left.
tmo() { local l=$(( BUDGET - ($(date +%s) - start) - 5 )); [ $l -gt 60 ] && l=60; [ $l -lt 10 ] && l=0; echo $l; }
# run_t CMD...: CMD under its step timeout (SIGKILL 5 s after TERM); 125 when skipped.
run_t() { local t; t=$(tmo); [ "$t" = 0 ] && { echo "(skipped: out of time) $*" >> "$LOG"; return 125; }; timeout -k 5 "$t" "$@"; }
finish() {
  { echo "magneton kernel tracing on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)," \
         "$(date -u +%Y-%m-%d), $(( $(date +%s) - start )) s"
    printf '%s\n' "${ROWS[@]}"; } > "$OUT/summary.txt"
  echo; cat "$OUT/summary.txt"
}
trap finish EXIT

step "checking the machine"
missing=""
for h in nlohmann/json.hpp CLI/CLI.hpp fmt/core.h sqlite3.h; do
  found=""
  for d in /usr/include /usr/local/include /tmp/gpudeps/usr/include; do [ -e "$d/$h" ] && found=1; done
  [ -n "$found" ] || missing+=" $h"
done
command -v cmake >/dev/null || missing+=" cmake"
command -v ninja >/dev/null || missing+=" ninja"
# cupti.h is found by CMake (src/capture/cupti/CMakeLists.txt); a missing one fails the build step.
$PY -c "import torch, transformers" 2>/dev/null || missing+=" python3(torch/transformers)"
if [ -n "$missing" ]; then
  row "build" "NOT RUN: missing on this machine:$missing (Debian -dev packages go in .gpudeps/, see scripts/gpu_env.sh)"
  exit 2
fi
$PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))" >> "$LOG" 2>&1

# PREBUILT: a folder with magneton and libmagneton_cupti.so built elsewhere
# (scripts/gpu/prebuild.sh), to spend no device time on the build.
if [ -n "${PREBUILT:-}" ] && [ -x "$PREBUILT/magneton" ]; then
  M=$(readlink -f "$PREBUILT/magneton")
  row "build" "prebuilt ($PREBUILT: $("$M" --version 2>&1 | head -1))"
else
  step "building $BUILD (magneton, libmagneton_cupti.so)"
  t0=$(date +%s)
  if ! { cmake -S . -B "$BUILD" -G Ninja $GPU_CMAKE_ARGS && timeout 150 ninja -C "$BUILD" magneton magneton_cupti; } >> "$LOG" 2>&1; then
    row "build" "FAILED (see log.txt)"
    tail -30 "$LOG"
    exit 1
  fi
  row "build" "ok ($(( $(date +%s) - t0 )) s)"
  M=$PWD/$BUILD/magneton
fi
ldd "$(dirname "$M")/libmagneton_cupti.so" >> "$LOG" 2>&1

cat > "$WORK/sanity.py" <<'EOF'
# 10 matmuls inside NVTX range "magneton:sanity"; prints the process's own view.
import torch
a = torch.randn(512, 512, device="cuda")
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("magneton:sanity")
for _ in range(10):
    a = a @ a
    a = a / a.norm()
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
print("SANITY_DONE", float(a.sum()), flush=True)
EOF

count() {  # count TABLE RUNFILE
  $PY -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[2]).execute('select count(*) from '+sys.argv[1]).fetchone()[0])" "$1" "$2" 2>>"$LOG"
}
runfile() { ls -t "$1".*.mgt 2>/dev/null | head -1; }

sanity() {  # sanity NAME [record options]
  local name=$1; shift
  step "sanity: 10 matmuls under magneton record $*"
  local t0 t1 rc secs done_ f
  t0=$(date +%s%N)
  run_t "$M" record -o "$WORK/$name" "$@" -- $PY "$WORK/sanity.py" > "$WORK/$name.out" 2>&1
  rc=$?; t1=$(date +%s%N)
  cat "$WORK/$name.out" >> "$LOG"
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", (b-a)/1e9}')
  done_=$(grep -c SANITY_DONE "$WORK/$name.out")
  f=$(runfile "$WORK/$name")
  if [ -n "$f" ]; then
    row "sanity ${*:-plain}" "kernels $(count kernels "$f"), ranges $(count ranges "$f"), api $(count api_calls "$f"); exit $rc, $secs s, done=$done_"
  else
    row "sanity ${*:-plain}" "NO RUN FILE; exit $rc, $secs s, done=$done_"
  fi
}
sanity sanity-plain



step "GPT-2: torch.profiler kernel count"
out=$(run_t $PY scripts/gpu/gpt2_loop.py --profile 2>>"$LOG"); echo "$out" >> "$LOG"
prof_kernels=$(echo "$out" | awk '/PROFILER_KERNELS/{print $2}')
row "gpt2 kernels, torch.profiler" "${prof_kernels:-FAILED}"

step "GPT-2: magneton record --only-ranges magneton: (emit_nvtx on)"
run_t "$M" record -o "$WORK/gpt2" --only-ranges magneton: -- $PY scripts/gpu/gpt2_loop.py --emit-nvtx >> "$LOG" 2>&1
rc=$?
f=$(runfile "$WORK/gpt2")
if [ -n "$f" ]; then
  mk=$(count kernels "$f"); mr=$(count ranges "$f")
  verdict=$([ "$mk" = "${prof_kernels:-x}" ] && echo "equal" || echo "DIFFERENT")
  row "gpt2 kernels, magneton record" "$mk ($verdict; exit $rc)"
  row "gpt2 NVTX ranges recorded" "$mr"
  row "gpt2 copies/syncs, API calls" "$(count transfers "$f"), $(count api_calls "$f")"
  { "$M" top "$f" -n 15; "$M" top "$f" --by range -n 15; } > "$OUT/top.txt" 2>&1
  row "magneton top" "$(grep -m1 'GPU energy' "$OUT/top.txt" | sed 's/^ *//')"
else
  row "gpt2 kernels, magneton record" "NO RUN FILE (exit $rc; see log.txt)"
fi

step "fixtures: raw activity dump + small run (2-layer GPT-2, 2 iterations)"
rm -rf "$WORK/dump" && mkdir -p "$WORK/dump"
MAGNETON_CUPTI_DUMP=$WORK/dump MAGNETON_CUPTI_DUMP_MAX_MB=1 \
  run_t "$M" record -f -o "$OUT/gpt2-small.mgt" -- $PY scripts/gpu/gpt2_loop.py --layers 2 --iters 2 --emit-nvtx >> "$LOG" 2>&1
d=$(ls -S "$WORK"/dump/cupti-*.bin 2>/dev/null | head -1)
[ -n "$d" ] && cp "$d" "$OUT/cupti-gpt2.bin"
row "fixtures" "$(cd "$OUT" && ls -la cupti-*.bin gpt2-small.mgt 2>/dev/null | awk '{printf "%s %s B; ", $9, $5}')"
step "JAX jit loop under magneton record"
rm -rf "$WORK/dump" && mkdir -p "$WORK/dump"
MAGNETON_CUPTI_DUMP=$WORK/dump MAGNETON_CUPTI_DUMP_MAX_MB=1 \
  run_t "$M" record -o "$WORK/jax" -- $PY scripts/gpu/jax_loop.py >> "$LOG" 2>&1
rc=$?
f=$(runfile "$WORK/jax")
if [ -n "$f" ]; then
  row "jax kernels, magneton record" "$(count kernels "$f") (exit $rc; API calls $(count api_calls "$f"))"
else
  row "jax kernels, magneton record" "NO RUN FILE (exit $rc; see log.txt)"
fi
d=$(ls -S "$WORK"/dump/cupti-*.bin 2>/dev/null | head -1)
[ -n "$d" ] && cp "$d" "$OUT/cupti-jax.bin"

step "done"
