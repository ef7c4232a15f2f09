#!/usr/bin/env bash
# Where the one-command route and the eager/compiled pair stand on the GPU
# machine (issues 22 and 26), with the run files brought back to read here:
#  1. scripts/gpu/gpt2_script.py (GPT-2 small fp16, 8 x 512, eager attention):
#     plain (its own ms per forward), then through the one-command route
#     (`python -m magneton record -o route.mgt gpt2_script.py ...`), then that
#     file diffed against itself (`--json`: the measured pass's device and host
#     time per iteration beside the plain figure);
#  2. PyTorch eager against torch.compile at GPU sizes (tests/data/dispatch/
#     make_fixtures.py --sides torch) and `magneton diff` of the pair.
# Files back in $OUT: log.txt, summary.txt, runs.tar.xz (the run files).
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/route_check.sh
#   BUDGET seconds (default 300), ITERS (default 300)
# GPU_DRY=1: the same on the CPU with tiny sizes and build/magneton:
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/rc scripts/gpu/route_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/route-check-out}
BUDGET=${BUDGET:-300}
ITERS=${ITERS:-300}
outputs rc
if [ "${GPU_DRY:-0}" = 1 ]; then
  M=$PWD/build/magneton script_args=(--tiny) size=(--layers 2 --width 64 --batch 4) dev=cpu energy=none repeat=20
else
  gpu_build magneton magneton_cupti magneton_torch magneton_energy_py >> "$log" 2>&1 || { echo "build failed"; exit 1; }
  M=$PWD/build-gpu/magneton script_args=() size=(--layers 8 --width 1024 --batch 64) dev=cuda energy=nvml repeat=300
fi

step "1. gpt2_script.py eager: plain, then the one-command route ($ITERS forwards)"
t 60 $py scripts/gpu/gpt2_script.py --attn eager --iters "$ITERS" "${script_args[@]}" 2>&1 | tail -n 1 | sed 's/^/plain: /' | tee -a "$summary"
t 150 $py -m magneton record -v -f -o "$W/route.mgt" scripts/gpu/gpt2_script.py --attn eager --iters "$ITERS" \
  "${script_args[@]}" > "$W/route.txt" 2>&1
echo "route exit $?" | tee -a "$summary"
tail -n 3 "$W/route.txt" | sed 's/^/route: /' | tee -a "$summary"
t 60 "$M" diff "$W/route.mgt" "$W/route.mgt" --json > "$W/route-self.json" 2>> "$log"
$py - "$W/route-self.json" <<'PY' | tee -a "$summary"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:  # noqa: BLE001
    sys.exit(f"self diff: {e}")
acc = d["runs"]["a"].get("per_iteration") or {}
print(f"route per iteration: device {acc.get('seconds')} s, host {acc.get('host_seconds')} s, busy "
      f"{acc.get('busy_seconds')} s, matched share {acc.get('matched_share')}, iterations {d['runs']['a'].get('iterations')}")
print("notes:", d.get("notes", [])[:6])
PY

step "2. torch eager against torch.compile (${size[*]}, repeat $repeat)"
t 180 $py tests/data/dispatch/make_fixtures.py "$W/disp" "${size[@]}" --repeat $repeat --device $dev --energy $energy \
  --sides torch >> "$log" 2>&1 || echo "recording failed, exit $?" | tee -a "$summary"
d=$W/disp
t 60 "$M" diff "$d/torch_eager.mgt" "$d/torch_compiled.mgt" --measured-a "$d/torch_eager-measured.mgt" \
  --measured-b "$d/torch_compiled-measured.mgt" > "$W/compile.txt" 2>&1
echo "compile diff exit $?" | tee -a "$summary"
head -n 25 "$W/compile.txt" | tee -a "$summary"
for f in "$d"/torch_*.mgt; do
  [ -f "$f" ] && $py - "$f" <<'PY' | tee -a "$summary"
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
n = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("ops", "kernels", "transfers", "api_calls")}
print(sys.argv[1].rsplit("/", 1)[-1], n)
PY
done

step "summary"
cat "$summary"
cp "$W/route.txt" "$W/compile.txt" "$OUT/" 2>/dev/null
(cd "$W" && tar -cJf "$OUT/runs.tar.xz" route.mgt route-self.json disp/torch_*.mgt 2>/dev/null) && fit "$OUT/runs.tar.xz"
ls -la "$OUT"
