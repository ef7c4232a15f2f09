#!/usr/bin/env bash
# The JAX recorder on the GPU machine (issue 10), in one device call:
#  1. builds the magneton CLI, the torch extension (magneton._torch, which also
#     holds the JAX writer) and the CUPTI injection library in build-gpu;
#  2. records the PyTorch and the JAX version of each model of
#     tests/data/jax/models.py (large sizes, same weights and inputs) with NVML
#     energy: torch with fingerprints, torch without (its measured pass), JAX
#     (values, kernels and energy in one file) — one process per side, so each
#     has the in-process CUPTI tracer to itself;
#  3. runs `magneton diff` on each pair and prints a short table: ops, kernels,
#     kernels linked to an op / to a JAX equation, energy, regions matched.
# Files back in $OUT (<= 8): build.log, record.log, diff-<model>.txt, diff-<model>.json,
# summary.txt, runs.tar.xz (the run files, to diff again offline with other options);
# 8 with the two default models; with more, the diff files travel in diffs.tar.gz. Whole script on the H200 with .gpubin carried (no build):
# ~2 minutes: 4 recording processes of ~15-25 s each (imports of torch and jax,
# JAX compiles, CUPTI), the diffs in seconds. Hard cap: BUDGET seconds (default 300);
# each step's timeout is cut to what is left.
#
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/jax.sh
#   scripts/gpu/jax.sh [--models mlp,attention] [--repeat 20]
# GPU_DRY=1: the same steps on a CPU machine (--size small --device cpu --energy none,
# JAX's CPU backend, repeat 2; no GPU or NVML check), to try this script off the GPU
# machine (about 1-2 minutes on a 2-core CPU machine):
#   PATH=~/.cache/magneton/venv-py312/bin:$PATH GPU_DRY=1 OUT=/tmp/dry-jax scripts/gpu/jax.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
source scripts/gpu_env.sh
OUT=${OUT:-/tmp/jax-out}
BUDGET=${BUDGET:-300}
mkdir -p "$OUT"
dry=${GPU_DRY:-0}
models=mlp,attention repeat=20 size=large dev=cuda energy=nvml
if [ "$dry" = 1 ]; then repeat=2 size=small dev=cpu energy=none; export JAX_PLATFORMS=cpu; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    *) echo "jax.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }
# t SECONDS CMD...: CMD under a timeout cut to the budget (killed 5 s after SIGTERM).
t() { local s; s=$(cap "$1"); shift; timeout -k 5 "$s" "$@"; }

step "checking the machine"
missing=""
python3 -c "import torch, jax, numpy" 2>/dev/null || missing+=" python3(torch/jax/numpy)"
if [ "$dry" != 1 ]; then
  t 60 python3 -c "import jax; assert jax.devices('gpu')" 2>/dev/null || missing+=" jax-gpu-devices"
  # As magneton's NVML sampler loads it (the driver's libraries may be mounted outside /usr/lib).
  python3 -c "import ctypes; ctypes.CDLL('libnvidia-ml.so.1')" 2>/dev/null || missing+=" libnvidia-ml.so.1"
fi
if [ -n "$missing" ]; then echo "jax.sh: missing on this machine:$missing" | tee "$OUT/build.log"; exit 2; fi
t 60 python3 -c "import torch, jax; print('torch', torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu', '| jax', jax.__version__, jax.devices())"

step "building (build-gpu)"
: > "$OUT/build.log"
gpu_build magneton magneton_torch magneton_cupti >> "$OUT/build.log" 2>&1 ||
  echo "jax.sh: build failed (tail of build.log below)"
tail -n 3 "$OUT/build.log"
if ! PYTHONPATH=python python3 -c "import magneton; magneton.recorder.extension()" 2>>"$OUT/build.log"; then
  echo "jax.sh: magneton._torch did not build; nothing to record"; exit 1
fi

step "recording ($models, $size, $dev, energy=$energy, repeat=$repeat)"
runs=$(mktemp -d /tmp/jax-runs.XXXX)
export PYTHONPATH=$PWD/python XLA_PYTHON_CLIENT_PREALLOCATE=false
: > "$OUT/record.log"
for m in ${models//,/ }; do
  for side in torch jax; do
    extra=""; [ $side = torch ] && extra=--torch-measured
    echo "-- $m/$side ($(( $(date +%s) - start )) s)" >> "$OUT/record.log"
    t 120 python3 -u tests/data/jax/make_fixtures.py "$runs" --size $size --device $dev --energy $energy \
      --repeat "$repeat" --models "$m" --sides $side $extra >> "$OUT/record.log" 2>&1 \
      || echo "jax.sh: recording $m/$side failed, exit $? (record.log)" | tee -a "$OUT/record.log"
  done
done
tail -n 8 "$OUT/record.log"

step "diffing"
have_diff=0
build-gpu/magneton diff --help 2>/dev/null | grep -q "Usage: [^ ]* diff" && have_diff=1
for m in ${models//,/ }; do
  a=$runs/${m}_torch.mgt b=$runs/${m}_jax.mgt
  [ -f "$a" ] && [ -f "$b" ] || continue
  if [ $have_diff = 1 ]; then
    measured=""
    if build-gpu/magneton diff --help 2>&1 | grep -q -- "--measured-a"; then
      measured="--measured-a $runs/${m}_torch_measured.mgt"
    fi
    t 60 build-gpu/magneton diff "$a" "$b" $measured --color never > "$OUT/diff-$m.txt" 2>&1
    echo "diff $m: exit $? (1 = findings)"
    t 60 build-gpu/magneton diff "$a" "$b" $measured --json > "$OUT/diff-$m.json" 2>>"$OUT/diff-$m.txt"
    head -n 25 "$OUT/diff-$m.txt"
  else
    echo "jax.sh: this build has no 'magneton diff' subcommand yet" | tee "$OUT/diff-$m.txt"
  fi
done

step "summary"
t 60 python3 - "$runs" "$OUT" $models <<'EOF' | tee "$OUT/summary.txt"
import json, os, sys
import magneton
runs, out, models = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
print(f"{'run':<28} {'ops':>6} {'kernels':>8} {'k->op':>7} {'k->eqn':>7} {'series':>6} {'wall ms':>9}")
for m in models:
    for side in ("torch", "torch_measured", "jax"):
        p = os.path.join(runs, f"{m}_{side}.mgt")
        if not os.path.exists(p):
            print(f"{m + '_' + side:<28} (missing)")
            continue
        r = magneton.load_run(p)
        ks, ops = r["kernels"], r["ops"]
        linked = sum(k["op"] >= 0 for k in ks)
        eqn = sum(k["op"] >= 0 and ops[k["op"]]["parent"] >= 0 for k in ks) if side == "jax" else 0
        pct = lambda n: f"{100 * n / len(ks):.0f}%" if ks else "-"
        wall = (r["info"]["end_ns"] - r["info"]["start_ns"]) / 1e6
        print(f"{m + '_' + side:<28} {len(ops):>6} {len(ks):>8} {pct(linked):>7} "
              f"{pct(eqn) if side == 'jax' else '':>7} {len(r['series']):>6} {wall:>9.1f}")
        if side == "jax":
            for s in r["stats"]:
                print(f"    stat {s['name']} = {s['value']}: {s['description'][:90]}")
            cfg = r["config"]
            print(f"    jax_default_matmul_precision={cfg.get('jax.config.jax_default_matmul_precision')}"
                  f" XLA_FLAGS='{cfg.get('env.XLA_FLAGS', '')}'")
    d = os.path.join(out, f"diff-{m}.json")
    if os.path.exists(d) and os.path.getsize(d):
        try:
            j = json.load(open(d))
            regions = j.get("regions", [])
            share = j.get("summary", {}).get("matched_share", {})
            pc = lambda x: f"{100 * x:.0f}%" if isinstance(x, (int, float)) else "?"
            print(f"  diff {m}: {len(regions)} regions matched, {len(j.get('findings', []))} findings, "
                  f"matched share torch {pc(share.get('a'))} jax {pc(share.get('b'))}")
            for r in regions[:12]:
                cost = lambda c: (f"{c.get('joules') or 0:.3g}J/{1e3 * (c.get('seconds') or 0):.3g}ms"
                                  if isinstance(c, dict) else "?")
                print(f"    {' '.join(r['ops_a'])[:50]:<50} | {' '.join(r['ops_b'])[:50]:<50} "
                      f"a={cost(r.get('a'))} b={cost(r.get('b'))}")
        except ValueError as e:
            print(f"  diff {m}: unreadable JSON ({e})")
EOF
tar -C "$runs" -cJf "$OUT/runs.tar.xz" . 2>/dev/null || echo "jax.sh: no run files to pack"
rm -rf "$runs"
# At most 8 files come back: past that, the per-model diff files travel as one archive.
if [ "$(ls "$OUT" | wc -l)" -gt 8 ]; then
  (cd "$OUT" && tar -czf diffs.tar.gz diff-* && rm -f diff-*) && echo "jax.sh: diff files packed into diffs.tar.gz"
fi
fit "$OUT"/*
step "done"
