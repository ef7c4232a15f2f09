#!/usr/bin/env bash
# The foundation's checks on the GPU machine (g++ 13, Ubuntu 24.04), in one
# device call, from the repository root:
#  1. builds `magneton` (build-gpu-store) and runs `magneton --version`,
#     `magneton info` (text and --json) on tests/data/sample.mgt, the bad-input
#     cases (missing, not a run file, truncated: exit 2, one line), and
#     `magneton doctor` (goal: the H200 with NVML and CUPTI usable);
#  2. when GoogleTest is installed: the store and CLI tests (core_tests,
#     cli_tests, including the SIGKILL crash test) built with this compiler;
#  3. when Google Benchmark is installed: bench/store_bench (writer rows/s,
#     LoadRun of 1M kernels) on this quieter many-core host.
# Files back in $OUT: build.log, info.txt, doctor.txt, tests.txt, bench.txt,
# summary.txt. Whole script: a few minutes (build ~1-2 min on 16 cores).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
[ -f scripts/gpu_env.sh ] && source scripts/gpu_env.sh
OUT=${OUT:-/tmp/store-out}
mkdir -p "$OUT"
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }
summary=()
result() { summary+=("$(printf '%-34s %s' "$1" "$2")"); }

step "checking the machine"
have_header() {
  for d in /usr/include /usr/local/include /tmp/gpudeps/usr/include; do [ -e "$d/$1" ] && return 0; done
  return 1
}
missing=""
have_header nlohmann/json.hpp || missing+=" nlohmann-json3-dev(nlohmann/json.hpp)"
have_header CLI/CLI.hpp       || missing+=" libcli11-dev(CLI/CLI.hpp)"
have_header fmt/core.h        || missing+=" libfmt-dev(fmt/core.h)"
have_header sqlite3.h         || missing+=" libsqlite3-dev(sqlite3.h)"
have_header eigen3/Eigen/Core || missing+=" libeigen3-dev(eigen3/Eigen/Core)"
if [ -n "$missing" ]; then
  echo "store.sh: missing on this machine:$missing" | tee "$OUT/summary.txt"
  exit 2
fi
have_gtest=0; have_header gtest/gtest.h && have_gtest=1
have_bench=0; have_header benchmark/benchmark.h && have_bench=1
echo "g++ $(g++ -dumpfullversion), sqlite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1), gtest $have_gtest, benchmark $have_bench, $(nproc) cores"

step "building magneton (build-gpu-store)"
: > "$OUT/build.log"
tests=OFF; bench=OFF
[ $have_gtest = 1 ] && tests=ON
[ $have_bench = 1 ] && bench=ON
cmake_args=${GPU_CMAKE_ARGS:-"-DPython_EXECUTABLE=$(command -v python3)"}
# Later -D options win over GPU_CMAKE_ARGS' TESTS/BENCH=OFF.
if ! cmake -S . -B build-gpu-store -G Ninja $cmake_args -DMAGNETON_TORCH=OFF -DMAGNETON_TESTS=$tests \
     -DMAGNETON_BENCH=$bench >> "$OUT/build.log" 2>&1; then
  echo "store.sh: cmake configure failed:"; tail -n 20 "$OUT/build.log"; exit 1
fi
targets="magneton"
[ $tests = ON ] && targets+=" core_tests cli_tests"
[ $bench = ON ] && targets+=" store_bench"
if ! ninja -C build-gpu-store -j"$(nproc)" $targets >> "$OUT/build.log" 2>&1; then
  echo "store.sh: build failed:"; grep -m8 -E "error|FAILED" "$OUT/build.log"; exit 1
fi
bin=build-gpu-store/magneton
result "build (g++ $(g++ -dumpfullversion))" "ok: $targets"

step "magneton --version, info"
{
  $bin --version
  $bin info tests/data/sample.mgt; echo "exit $?"
  $bin info tests/data/sample.mgt --json | head -n 12; echo "exit ${PIPESTATUS[0]}"
} > "$OUT/info.txt" 2>&1
cat "$OUT/info.txt"
grep -q "kernels            12" "$OUT/info.txt" && result "magneton info" "ok" || result "magneton info" "FAILED (info.txt)"

tmp=$(mktemp -d)
echo "not a run" > "$tmp/notes.txt"
head -c 20000 tests/data/sample.mgt > "$tmp/cut.mgt"
bad_ok=1
for f in "$tmp/absent.mgt" "$tmp/notes.txt" "$tmp/cut.mgt"; do
  err=$($bin info "$f" 2>&1 >/dev/null); rc=$?
  echo "info $f -> exit $rc: $err" | tee -a "$OUT/info.txt"
  [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || bad_ok=0
done
rm -rf "$tmp"
[ $bad_ok = 1 ] && result "bad input (exit 2, one line)" "ok" || result "bad input (exit 2, one line)" "FAILED"

step "magneton doctor"
PYTHONPATH=$PWD/python MAGNETON_PYTHON=$(command -v python3) timeout 120 $bin doctor > "$OUT/doctor.txt" 2>&1
echo "doctor exit $?"; cat "$OUT/doctor.txt"
gpu=$(grep -m1 -E "H200|H100|A100|NVIDIA" "$OUT/doctor.txt" | sed 's/^ *//')
result "doctor: GPU" "${gpu:-none found}"
result "doctor: NVML line" "$(grep -m1 'NVML' "$OUT/doctor.txt" | sed 's/^ *//' | cut -c1-60)"
result "doctor: CUPTI line" "$(grep -m1 'CUPTI' "$OUT/doctor.txt" | sed 's/^ *//' | cut -c1-60)"

if [ $tests = ON ]; then
  step "store and CLI tests"
  { timeout 300 build-gpu-store/tests/core_tests; timeout 120 build-gpu-store/tests/cli_tests; } > "$OUT/tests.txt" 2>&1
  grep -E "^\[  (PASSED|FAILED) |\[ info \]" "$OUT/tests.txt"
  result "core_tests + cli_tests" "$(grep -E '^\[  (PASSED|FAILED) ' "$OUT/tests.txt" | tr '\n' ' ')"
else
  result "core_tests + cli_tests" "skipped: no GoogleTest headers"
fi

if [ $bench = ON ]; then
  step "store_bench"
  timeout 240 build-gpu-store/bench/store_bench > "$OUT/bench.txt" 2>&1
  grep BM_ "$OUT/bench.txt"
  result "store_bench write 1M" "$(grep BM_Write "$OUT/bench.txt" | grep -oE 'items_per_second=[^ ]+')"
  result "store_bench LoadRun 1M" "$(grep BM_Load "$OUT/bench.txt" | awk '{print $2, $3}')"
else
  result "store_bench" "skipped: no Google Benchmark headers"
fi

step "summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
