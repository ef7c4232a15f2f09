#!/usr/bin/env bash
# Installs, builds and runs Magneton's main job on whatever this machine has.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
venv=$(scripts/build.sh | tail -n 1)
PYTHONPATH="$here/python" MAGNETON_PYTHON="$venv/bin/python" build/magneton doctor
