#!/usr/bin/env bash
# Installs, builds and runs Magneton's main job on whatever this machine has:
# what it can measure (doctor), then `magneton demo`, which records two
# variants of a small PyTorch model with the torch recorder on this machine's
# device (its GPU, else the CPU), diffs the two runs, prints the findings and
# what could not be measured here, and writes the HTML and JSON reports
# (docs/diff.md, "magneton demo"). On 2 CPU cores it takes one to three minutes.
#   DEMO_OUT  where the runs and reports go (default build/demo)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
venv=$(scripts/build.sh | tail -n 1)
export PYTHONPATH="$here/python" MAGNETON_PYTHON="$venv/bin/python"
out=${DEMO_OUT:-$here/build/demo}
echo "== magneton doctor"
build/magneton doctor
echo
echo "== magneton demo --out $out"
build/magneton demo --out "$out"
