#!/usr/bin/env bash
# A long recording on the GPU machine (issue "Record for as long as the
# program runs", done-when), in one device call:
#  1. scripts/gpu/long_recording.py: Transformers GPT-2 small (random weights,
#     AdamW, 8 x 256) trained for SECONDS inside one magneton.record with a
#     schedule of 10 active steps after step 100; resident memory, rows held
#     and file size every 10 s (memory flat is the goal);
#  2. the same with a short window (the same steps 100-110, the same weights);
#  3. `magneton info` of both and `magneton diff` of the two: the recorded
#     steps diffable, an A/A pair (no waste expected).
# Files back in $OUT: long.txt, short.txt, info.txt, diff.txt, diff.json, summary.txt.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/long_recording.sh
#   SECONDS_LONG (default 420: the call's 600 s also hold the build, the short run and the diff), BUDGET (570)
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh  # step, t (a timeout within BUDGET), gpu_build
OUT=${OUT:-/tmp/long-out} BUDGET=${BUDGET:-570} log=$OUT/summary.txt
mkdir -p "$OUT" && : > "$log"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python
step "binaries"
gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$OUT/build.log" 2>&1 || { echo "build failed"; exit 1; }
M=$PWD/build-gpu/magneton
W=$(mktemp -d /tmp/long.XXXX)
step "long recording (${SECONDS_LONG:-420} s)"
t $(( ${SECONDS_LONG:-420} + 60 )) python3 scripts/gpu/long_recording.py --out "$W/long.mgt" --seconds "${SECONDS_LONG:-420}" 2>&1 | tee "$OUT/long.txt"
step "short recording of the same steps"
t 120 python3 scripts/gpu/long_recording.py --out "$W/short.mgt" --seconds 5 2>&1 | tee "$OUT/short.txt"
step "info and diff"
{ "$M" info "$W/long.mgt"; "$M" info "$W/short.mgt"; } > "$OUT/info.txt" 2>&1
t 120 "$M" diff "$W/long.mgt" "$W/short.mgt" > "$OUT/diff.txt" 2>&1
t 120 "$M" diff "$W/long.mgt" "$W/short.mgt" --json > "$OUT/diff.json" 2>/dev/null
python3 - "$OUT" >> "$log" <<'PY'
import json, sys
out = sys.argv[1]
rows = [json.loads(l) for l in open(f"{out}/long.txt") if l.startswith("{")]
end = rows[-1] if rows and "steps" in rows[-1] else {}
samples = end.get("samples", [])
if samples:
    rss = [s["rss_mb"] for s in samples]
    print(f"long: {end['steps']} steps, file {end['file_mb']} MB; RSS first {rss[0]} MB, "
          f"after 60 s {rss[min(6, len(rss) - 1)]} MB, peak {max(rss)} MB, last {rss[-1]} MB")
print("diff:", " | ".join(l.strip() for l in open(f"{out}/diff.txt") if "waste" in l or "matched" in l)[:600])
PY
cat "$log"
