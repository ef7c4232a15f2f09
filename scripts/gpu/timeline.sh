#!/usr/bin/env bash
# The timeline cases and the eager/compiled pairs with the idle hold, in one
# device call (issues 21 and 26):
#  1. cases.sh on the four timeline cases (pageable-copy, sync-per-layer,
#     item-per-step, cuda-graph-step): ground truth in the same call, both
#     sides and the A/A run recorded and diffed;
#  2. dispatch.sh step 2: JAX without/with jax.jit, torch eager/torch.compile
#     and an A/A pair at GPU sizes, each diffed.
# Files back in $OUT: summary.txt, groundtruth.json (merge it into
# cases/groundtruth-h200.json), logs.tgz, runs.tar.xz (or its parts: cat them | tar -xJ),
# dispatch-runs.tar.xz.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/timeline.sh
#   CASES_BUDGET (default 340 s), DISPATCH_BUDGET (default 170 s); TIMELINE_CASES: the cases, in
#   the order they are recorded (those past the budget are reported as not run)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/timeline-out}
mkdir -p "$OUT/cases" "$OUT/dispatch"
RUNS_CAP_MIB=60 BUDGET=${CASES_BUDGET:-340} OUT=$OUT/cases scripts/gpu/cases.sh \
  --cases "${TIMELINE_CASES:-pageable-copy,cuda-graph-step,item-per-step,sync-per-layer}" --seconds 1.0 --trials 2 \
  > "$OUT/cases/cases.txt" 2>&1
BUDGET=${DISPATCH_BUDGET:-170} STEPS=2 OUT=$OUT/dispatch scripts/gpu/dispatch.sh > "$OUT/dispatch/dispatch.txt" 2>&1
{
  echo "== timeline cases"; tail -n 14 "$OUT/cases/run_all.txt" 2>/dev/null; cat "$OUT/cases/groundtruth.txt" 2>/dev/null
  echo "== eager/compiled"; cat "$OUT/dispatch/summary.txt" 2>/dev/null
} > "$OUT/summary.txt"
for f in "$OUT"/cases/runs.tar.xz*; do [ -f "$f" ] && mv "$f" "$OUT/"; done
cp "$OUT/cases/groundtruth.json" "$OUT/" 2>/dev/null
mv "$OUT/dispatch/dispatch-runs.tar.xz" "$OUT/" 2>/dev/null
(cd "$OUT" && tar -czf logs.tgz cases dispatch && rm -rf cases dispatch)
cat "$OUT/summary.txt"
