#!/usr/bin/env bash
# Configures and builds Magneton into build/ (after scripts/setup.sh).
#   BUILD_DIR      default build
#   any arguments are passed to cmake at configure time (-DMAGNETON_SANITIZE=ON ...)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$("$here/scripts/setup.sh" | tail -n 1)
build=${BUILD_DIR:-$here/build}
cmake -S "$here" -B "$build" -G Ninja -DPython_EXECUTABLE="$venv/bin/python" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
echo "$venv"
