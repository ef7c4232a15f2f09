#!/usr/bin/env bash
# The one test command: installs, builds and runs every test.
#   1. set-up and build (build/)          5. ASan+UBSan build of the C++ tests (build-asan/) and ctest
#   2. ctest                              6. the run-store reader under libFuzzer (build-fuzz/), bounded
#   3. pytest (tests/python)
#   4. the pip route: `pip install .` into a fresh venv and a smoke test of the installed package
#      (scripts/test_package.sh; build-pip/)
# Closes with ctest's and pytest's own summary lines; exits non-zero if any step failed.
# A test that hangs is stopped by ctest's --timeout and counts as failed.
#   MAGNETON_FUZZ_SECONDS  fuzzing time (default 60; 0 skips fuzzing)
#   MAGNETON_NO_SANITIZE=1 skips the sanitizer build
#   MAGNETON_NO_PACKAGE=1  skips the pip route
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
logs=$(mktemp -d "${TMPDIR:-/tmp}/magneton-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT
failed=()
# Each step says when it began (seconds since the start), so a slow one shows.
step() { echo; echo "== $* (at ${SECONDS} s)"; }

step "set-up and build (build/)"
venv=$(scripts/build.sh | tail -n 1) || { echo "test.sh: build failed" >&2; exit 1; }

step "ctest (build/)"
ctest --test-dir build --output-on-failure --timeout 600 -j "$(nproc)" 2>&1 | tee "$logs/ctest"
[ "${PIPESTATUS[0]}" = 0 ] || failed+=("ctest")

step "pytest (tests/python)"
PYTHONPATH="$here/python" MAGNETON_BUILD="$here/build" MAGNETON_PYTHON="$venv/bin/python" \
  "$venv/bin/python" -m pytest -q tests/python 2>&1 | tee "$logs/pytest"
rc=${PIPESTATUS[0]}
# 5: no tests collected, which is not a failure.
[ "$rc" = 0 ] || [ "$rc" = 5 ] || failed+=("pytest")

if [ "${MAGNETON_NO_PACKAGE:-0}" != 1 ]; then
  step "the pip route: pip install . into a fresh venv, smoke test of the installed package"
  scripts/test_package.sh "$venv" 2>&1 | tee "$logs/package"
  [ "${PIPESTATUS[0]}" = 0 ] || failed+=("package")
fi

if [ "${MAGNETON_NO_SANITIZE:-0}" != 1 ]; then
  step "sanitizer build (build-asan/: ASan + UBSan) and ctest"
  # No torch extension (heavy, and torch is not ASan-built) and no Python at
  # all: the extension modules land in python/magneton and would replace the
  # normal build's.
  if BUILD_DIR="$here/build-asan" scripts/build.sh -DMAGNETON_SANITIZE=ON -DMAGNETON_TORCH=OFF \
       -DMAGNETON_BENCH=OFF -DPython_EXECUTABLE=/bin/false >/dev/null; then
    # intercept_tls_get_addr=0: the leak checker's record of dynamic TLS blocks
    # (a shared library's) can hold a garbage range under this glibc, and its scan then
    # crashes at exit ("Tracer caught signal 11", depending on the binary's
    # layout only); static TLS and every stack and heap root are still scanned.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-asan --output-on-failure --timeout 900 -j "$(nproc)" 2>&1 | tee "$logs/ctest-asan"
    [ "${PIPESTATUS[0]}" = 0 ] || failed+=("sanitizer ctest")
  else
    failed+=("sanitizer build")
  fi
fi

fuzz_seconds=${MAGNETON_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" != 0 ]; then
  step "fuzz the run-store reader for ${fuzz_seconds}s (build-fuzz/, clang libFuzzer + ASan + UBSan)"
  if BUILD_DIR="$here/build-fuzz" BUILD_TARGETS=store_fuzz scripts/build.sh -DCMAKE_C_COMPILER=clang \
       -DCMAKE_CXX_COMPILER=clang++ -DMAGNETON_FUZZ=ON -DMAGNETON_TORCH=OFF -DMAGNETON_CUPTI=OFF \
       -DMAGNETON_BENCH=OFF -DPython_EXECUTABLE=/bin/false >/dev/null; then
    # Seeded with a small valid run, written now by this build's store.
    mkdir -p "$logs/corpus" "$logs/artifacts"
    build/tests/fuzz/make_sample_run "$logs/corpus/sample.mgt"
    if (cd "$logs" && TMPDIR="$logs" "$here/build-fuzz/tests/fuzz/store_fuzz" -max_total_time="$fuzz_seconds" \
          -timeout=20 -rss_limit_mb=2048 -max_len=262144 -artifact_prefix="$logs/artifacts/" \
          -print_final_stats=1 corpus >"$logs/fuzz" 2>&1); then
      grep -E "^(Done|stat::number_of_executed_units)" "$logs/fuzz"
    else
      tail -n 40 "$logs/fuzz"
      mkdir -p "$here/build-fuzz/crashes" && cp "$logs"/artifacts/* "$here/build-fuzz/crashes/" 2>/dev/null
      echo "fuzz: failing inputs copied to build-fuzz/crashes/"
      failed+=("fuzz")
    fi
  else
    failed+=("fuzz build")
  fi
fi

echo
echo "== summary (${SECONDS} s in all)"
# ctest's closing lines ("100% tests passed, ..." and "Total Test time"), then pytest's last line.
for run in "ctest (build/):ctest" "ctest (build-asan/):ctest-asan"; do
  [ -f "$logs/${run##*:}" ] || continue
  echo "${run%%:*}"
  grep -E "tests passed|tests failed out of|Total Test time" "$logs/${run##*:}" | tail -n 2
done
if [ -f "$logs/package" ]; then
  echo "pip route (scripts/test_package.sh)"
  grep -E "^package: (installed|smoke test passed)" "$logs/package" || echo "package: failed"
fi
if [ -f "$logs/pytest" ]; then
  echo "pytest (tests/python)"
  grep -v '^\s*$' "$logs/pytest" | tail -n 1
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
