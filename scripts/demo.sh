#!/usr/bin/env bash
# Installs, builds and runs Magneton's main job on whatever this machine has:
# what it can measure (doctor), then what a recorded run holds (info).
# tests/data/sample.mgt is a small synthetic run written with the store API
# (tests/fuzz/make_sample_run); a real recording will replace it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
venv=$(scripts/build.sh | tail -n 1)
export PYTHONPATH="$here/python" MAGNETON_PYTHON="$venv/bin/python"
echo "== magneton doctor"
build/magneton doctor
echo
echo "== magneton info tests/data/sample.mgt"
build/magneton info tests/data/sample.mgt
