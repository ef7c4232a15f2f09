#!/usr/bin/env bash
# The case suite again with new ground truth for some cases, in one device call:
# ground truth (cases/groundtruth.py) for the cases named by GT_CASES only,
# merged into the committed ground truth (GT_FILE), then scripts/gpu/cases.sh on
# every case (or RUN_CASES) against the merged file. The merged file comes back as
# $OUT/groundtruth-merged.json (commit it over GT_FILE).
#   usage on the device: carry [".gpudeps", ".gpubin"];
#   GT_CASES=sd-279,torch-vs-jax OUT=$OUT scripts/gpu/cases_update.sh
#   GT_CASES=pytorch-3929,pytorch-4392,pytorch-12461,hf-28005 RUN_CASES=$GT_CASES OUT=$OUT scripts/gpu/cases_update.sh
# RUN_CASES: the cases to record and diff after the ground truth (default: all; the whole
# suite does not fit one call). RESULTS.md is then regenerated off the GPU from every
# committed run: python cases/run_all.py --diff-only (docs/cases.md).
# GT_CASES empty: no new ground truth, the cases recorded against GT_FILE.
# Budget: ~90 s of ground truth for two cases (1.0 s windows, 2 trials, as the committed file;
# GT_BUDGET, default 120), then the rest for the suite, ~60 s a case with its A/A run;
# BUDGET (default 560) caps the whole.
# Files back in $OUT: summary.txt (the ground truth's and the suite's tails), groundtruth-merged.json,
# logs.tgz (every log), runs.tar.xz or its parts (cases.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
OUT=${OUT:-/tmp/cases-update}
BUDGET=${BUDGET:-560}
GT_FILE=${GT_FILE:-cases/groundtruth-h200.json}
GT_CASES=${GT_CASES:-}
mkdir -p "$OUT/gt"
if [ -z "$GT_CASES" ]; then
  cp "$GT_FILE" "$OUT/groundtruth-merged.json"
else
BUDGET=${GT_BUDGET:-120} OUT=$OUT/gt bash scripts/gpu/cases.sh --groundtruth-only --seconds 1.0 --trials 2 \
  --cases "$GT_CASES" > "$OUT/gt/cases.log" 2>&1
tail -n 12 "$OUT/gt/cases.log"
python3 cases/merge_groundtruth.py "$GT_FILE" "$OUT/gt/groundtruth.json" "$OUT/groundtruth-merged.json"
fi
left=$(( BUDGET - ($(date +%s) - start) ))
# 3 other files back + at most 5 parts of 15 MiB.
RUNS_CAP_MIB=75 BUDGET=$left OUT=$OUT/suite bash scripts/gpu/cases.sh --groundtruth "$OUT/groundtruth-merged.json" \
  ${RUN_CASES:+--cases "$RUN_CASES"} > "$OUT/suite.log" 2>&1
# Few files come back from the device: the run archive, the merged ground truth, a summary, the logs.
mv "$OUT"/suite/runs.tar.xz* "$OUT"/ 2>/dev/null
{ tail -n 12 "$OUT/gt/cases.log" 2>/dev/null; tail -n 40 "$OUT/suite/run_all.txt" 2>/dev/null; } > "$OUT/summary.txt"
(cd "$OUT" && tar -czf logs.tgz gt suite suite.log && rm -rf gt suite suite.log)
cat "$OUT/summary.txt"
