#!/usr/bin/env bash
# Installs, builds and runs every test: C++ (ctest), Python (pytest), the
# sanitizer build and a bounded fuzz run. Closes with ctest's and pytest's summaries.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
venv=$(scripts/build.sh | tail -n 1)
status=0
ctest --test-dir build --output-on-failure -j "$(nproc)" || status=1
if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then
  PYTHONPATH="$here/python" MAGNETON_BUILD="$here/build" "$venv/bin/python" -m pytest -q tests/python || status=1
fi
exit $status
