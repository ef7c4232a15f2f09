#!/usr/bin/env bash
# Records the diff fixtures: tiny GPT-2 blocks (2 layers, width 64, sequence 16)
# on the CPU with the torch recorder, a recording pass (fingerprints) and a
# measured pass (3 iterations) per variant. Run from the repository root with
# the project's venv python and the built extension (python/magneton/_torch*.so):
#   MAGNETON_PYTHON=~/.cache/magneton/venv-py312/bin/python tests/data/diff/record.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${MAGNETON_PYTHON:-python3}
export PYTHONPATH="$here/../../../python${PYTHONPATH:+:$PYTHONPATH}"
record() {  # variant file-stem
  "$py" -m magneton.demo.gpt2_blocks --variant "$1" --size tiny --device cpu --iterations 3 \
    --out "$here/$2.mgt" --measured "$here/$2-measured.mgt"
  for f in "$here/$2.mgt" "$here/$2-measured.mgt"; do sqlite3 "$f" 'VACUUM'; done
}
record gelu_new gelu_new           # a of the GELU pair
record gelu_fused gelu_fused       # b of the GELU pair
record gelu_new gelu_new_again     # the same program again: the A/A pair with gelu_new
record addmm addmm                 # the Conv1D pair (HF Conv1D's addmm vs mm + add)
record mm_add mm_add
