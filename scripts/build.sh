#!/usr/bin/env bash
# Configures and builds Magneton (after scripts/setup.sh); prints the venv path last.
#   BUILD_DIR      build directory (default build/)
#   BUILD_TARGETS  space-separated targets (default: all)
#   arguments      passed to cmake at configure time (-DMAGNETON_SANITIZE=ON ...)
#   MAGNETON_NO_CCACHE=1  compiles without ccache (scripts/compiler_cache.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$("$here/scripts/setup.sh" | tail -n 1)
build=${BUILD_DIR:-$here/build}
. "$here/scripts/compiler_cache.sh"
cmake -S "$here" -B "$build" -G Ninja -DPython_EXECUTABLE="$venv/bin/python" "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}" >&2
echo "$venv"
