#!/usr/bin/env bash
# The energy checks of issue 3 on the H200, in one device call:
#  1. builds the magneton CLI and magneton._energy in build-gpu;
#  2. `magneton doctor`;
#  3. scripts/gpu/energy_check.py: idle power (3 s), a steady bf16 matmul loop
#     (10 s window: loaded power, energy-counter delta vs the integral of the
#     sampled instant power, goal within 3%), each NVML reading's observed update
#     period, and a 30/70 ms duty cycle (does the counter integrate continuously?);
#  4. `magneton measure --per N --unit matmul -- python3 scripts/gpu/energy_workload.py N`.
# Files back in $OUT (7): build.log, doctor.txt, check.txt, energy_series.json
# (every reading, for test fixtures), measure.txt, measure.json, summary.txt. Whole script: under 3 minutes (build ~1 min).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
[ -f scripts/gpu_env.sh ] && source scripts/gpu_env.sh
OUT=${OUT:-/tmp/energy-out}
mkdir -p "$OUT"
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }

step "checking the machine"
# Header-only and -dev dependencies of the build; the image may lack them.
missing=""
have_header() {
  for d in /usr/include /usr/local/include /tmp/gpudeps/usr/include; do [ -e "$d/$1" ] && return 0; done
  return 1
}
have_header nlohmann/json.hpp || missing+=" nlohmann-json3-dev(nlohmann/json.hpp)"
have_header CLI/CLI.hpp       || missing+=" libcli11-dev(CLI/CLI.hpp)"
have_header fmt/core.h        || missing+=" libfmt-dev(fmt/core.h)"
have_header sqlite3.h         || missing+=" libsqlite3-dev(sqlite3.h)"
have_header eigen3/Eigen/Core || missing+=" libeigen3-dev(eigen3/Eigen/Core)"
python3 -c "import pybind11" 2>/dev/null || missing+=" python3-pybind11"
python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || missing+=" torch-with-CUDA"
ldconfig -p | grep -q libnvidia-ml.so.1 || [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ] || missing+=" libnvidia-ml.so.1"
if [ -n "$missing" ]; then
  echo "energy.sh: missing on this machine:$missing" | tee "$OUT/summary.txt"
  exit 2
fi

step "building magneton and magneton._energy (build-gpu)"
: > "$OUT/build.log"
cmake_args=${GPU_CMAKE_ARGS:-"-DPython_EXECUTABLE=$(command -v python3) -DMAGNETON_TESTS=OFF -DMAGNETON_BENCH=OFF"}
if ! cmake -S . -B build-gpu -G Ninja $cmake_args >> "$OUT/build.log" 2>&1; then
  echo "energy.sh: cmake configure failed:"; tail -n 20 "$OUT/build.log"; exit 1
fi
if ! ninja -C build-gpu -j16 magneton magneton_energy_py >> "$OUT/build.log" 2>&1; then
  echo "energy.sh: build failed:"; grep -m5 -E "error|FAILED" "$OUT/build.log"; exit 1
fi
bin=build-gpu/magneton
export PYTHONPATH=$PWD/python

step "magneton doctor"
timeout 120 $bin doctor > "$OUT/doctor.txt" 2>&1
echo "doctor exit $?"; cat "$OUT/doctor.txt"

step "idle, steady matmul, duty cycle (energy_check.py, ~20 s)"
timeout 150 python3 scripts/gpu/energy_check.py "$OUT" 2>&1 | tee "$OUT/check.txt"

step "magneton measure -- python3 scripts/gpu/energy_workload.py 3000"
timeout 120 $bin measure --per 3000 --unit matmul --carbon 400 -- python3 scripts/gpu/energy_workload.py 3000 \
  > "$OUT/measure.txt" 2>&1
echo "measure exit $?" | tee -a "$OUT/measure.txt"; cat "$OUT/measure.txt"
$bin measure --json -o "$OUT/measure.json" -- python3 -c "import torch; torch.ones(1, device='cuda'); print('ok')" \
  >/dev/null 2>&1; echo "measure --json exit $?"

{
  echo "energy.sh summary ($(date -u +%FT%TZ), $(( $(date +%s) - start )) s)"
  grep -E "^(device|idle|loaded|steady|  |duty|observed)" "$OUT/check.txt"  # includes integral vs counter over the steady window
  grep -E "gpu0|total|per matmul|carbon|exit code|elapsed" "$OUT/measure.txt"
} > "$OUT/summary.txt"
step "done"
cat "$OUT/summary.txt"
