#!/usr/bin/env bash
# Semantic matching on GPU recordings (issue 6), in one device call:
#  1. builds magneton._torch in build-gpu against this machine's torch;
#  2. records the labeled pairs of scripts/record_match_pairs.py on the GPU
#     (--device cuda), plus gpt2_tf32_cuda: the same float32 GPT-2 recorded
#     with allow_tf32 off and on (real tensor-core TF32, not the CPU emulation);
#  3. if GoogleTest is on this machine, builds analysis_tests and runs the
#     evaluation (precision / recall / F1 over the tolerance sweep) on them;
#  4. packs the recordings into $OUT/match_pairs_cuda.tar.gz so the same
#     evaluation can run on the CPU machine:
#       tar xzf match_pairs_cuda.tar.gz -C /tmp && MAGNETON_MATCH_EVAL_DIR=/tmp/pairs \
#         build/tests/analysis_tests --gtest_filter='MatchEval.*'
# Files back in $OUT: build.log, record.log, match_eval.txt, match_pairs_cuda.tar.gz.
# About 3 minutes on the H200 (the build is most of it).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/match-out}
mkdir -p "$OUT"
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }

step "checking the machine"
missing=""
python3 -c "import torch, transformers, pybind11" 2>/dev/null || missing+=" python3(torch/transformers/pybind11)"
python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || missing+=" cuda-device"
for h in eigen3/Eigen/Core nlohmann/json.hpp fmt/core.h; do
  [ -e /usr/include/$h ] || [ -e /tmp/gpudeps/usr/include/$h ] || missing+=" $h"
done
if [ -n "$missing" ]; then echo "match.sh: missing on this machine:$missing" | tee "$OUT/build.log"; exit 2; fi
have_gtest=no
[ -e /usr/include/gtest/gtest.h ] || [ -e /tmp/gpudeps/usr/include/gtest/gtest.h ] && have_gtest=yes
echo "GoogleTest (for the evaluation binary): $have_gtest"

step "building magneton._torch$([ $have_gtest = yes ] && echo ' and analysis_tests')"
: > "$OUT/build.log"
args=$GPU_CMAKE_ARGS
[ $have_gtest = yes ] && args=${args/-DMAGNETON_TESTS=OFF/-DMAGNETON_TESTS=ON}
if cmake -S . -B build-gpu -G Ninja $args >> "$OUT/build.log" 2>&1; then
  targets="magneton_torch"
  [ $have_gtest = yes ] && targets+=" analysis_tests"
  ninja -C build-gpu -j16 $targets >> "$OUT/build.log" 2>&1 || echo "match.sh: build failed (build.log)"
else
  echo "match.sh: cmake configure failed (build.log)"
fi
tail -n 2 "$OUT/build.log"
export PYTHONPATH=$PWD/python
if ! python3 -c "import torch, magneton._torch" 2>>"$OUT/build.log"; then
  echo "match.sh: magneton._torch did not build or import (build.log)"; exit 1
fi

step "recording the pairs on the GPU"
pairs=$(mktemp -d /tmp/match-pairs.XXXX)/pairs
python3 scripts/record_match_pairs.py --device cuda --out "$pairs" 2>&1 | grep -v '^\[transformers\]' | tee "$OUT/record.log"
tar czf "$OUT/match_pairs_cuda.tar.gz" -C "$(dirname "$pairs")" pairs
ls -la "$OUT/match_pairs_cuda.tar.gz"

step "evaluating"
if [ $have_gtest = yes ] && [ -x build-gpu/tests/analysis_tests ]; then
  MAGNETON_MATCH_EVAL_DIR="$pairs" build-gpu/tests/analysis_tests --gtest_filter='MatchEval.*' > "$OUT/match_eval.txt" 2>&1
  echo "evaluation exit code: $?"
  grep -E '^(tolerance|  |[a-z_0-9]+ +[0-9]|all pairs)|FAILED|PASSED' "$OUT/match_eval.txt"
else
  echo "no GoogleTest here: evaluate match_pairs_cuda.tar.gz on the CPU machine (see the header)" | tee "$OUT/match_eval.txt"
fi
step "done"
