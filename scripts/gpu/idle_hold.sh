#!/usr/bin/env bash
# The idle hold and the diff's time on large GPU runs, in one device call
# (docs/energy.md "Idle hold", docs/benchmarks.md "Diff"):
#  1. the pageable-copy case (cases.sh --cases pageable-copy: ground truth,
#     both sides and the A/A run recorded with the idle hold, diffed);
#  2. dispatch.sh step 3: run pairs of ~100k operators with their kernels and
#     the wall time of `magneton diff` on each.
# Files back in $OUT: summary.txt (both parts' own summaries), logs.tgz (each
# part's files but its run files), cases-runs.tar.xz (the case's run files; in
# cases-runs.tar.xz.partNN pieces past 15 MiB: cat them | tar -xJ).
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/idle_hold.sh
#   CASES_BUDGET (default 300 s), DIFF_BUDGET (default 240 s)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/idle-hold-out}
mkdir -p "$OUT/cases" "$OUT/dispatch"
BUDGET=${CASES_BUDGET:-300} OUT=$OUT/cases scripts/gpu/cases.sh --cases pageable-copy --seconds 1.5 --trials 3 \
  > "$OUT/cases/cases.txt" 2>&1
BUDGET=${DIFF_BUDGET:-240} STEPS=3 OUT=$OUT/dispatch scripts/gpu/dispatch.sh > "$OUT/dispatch/dispatch.txt" 2>&1
{
  echo "== pageable-copy"; tail -n 25 "$OUT/cases/run_all.txt" 2>/dev/null; cat "$OUT/cases/groundtruth.txt" 2>/dev/null
  echo "== diff time"; cat "$OUT/dispatch/summary.txt" 2>/dev/null
} > "$OUT/summary.txt"
for f in "$OUT"/cases/runs.tar.xz*; do [ -f "$f" ] && mv "$f" "$OUT/cases-$(basename "$f")"; done
rm -f "$OUT"/dispatch/*.tar.xz
(cd "$OUT" && tar -czf logs.tgz cases dispatch && rm -rf cases dispatch)
cat "$OUT/summary.txt"
