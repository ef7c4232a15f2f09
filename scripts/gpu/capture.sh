#!/usr/bin/env bash
# Kernel tracing (issue 4) and the torch recorder (issue 5) on the GPU machine,
# in one device call of about 3 minutes, with binaries built beforehand on the
# CPU machine (scripts/gpu/prebuild.sh → .gpubin/, carried with the call):
#  1. in the background, builds magneton._torch with this machine's g++ 13
#     into build-gpu (the configuration that crashed before);
#  2. scripts/gpu/cupti.sh with the prebuilt magneton and libmagneton_cupti.so;
#  3. the torch recorder, prebuilt (g++ 12) and, once built, g++ 13: a CPU and a
#     CUDA recording of nn.Linear + relu, each in its own process, under a
#     native crash tracer (crash_trace.c) so a crash names its C++ frame;
#  4. if the recorder works: the GPT-2 recording pass and measured pass of
#     scripts/gpu/torch.sh.
# Files back in $OUT: cupti.tar.gz (cupti.sh's files), torch.log, summary.txt.
#   usage on the device: carry [".gpudeps", ".gpubin"]; OUT=$OUT scripts/gpu/capture.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
OUT=${OUT:-/tmp/capture-out}
mkdir -p "$OUT"
BUDGET=${BUDGET:-185}
source scripts/gpu_env.sh
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:${CUDA_HOME:-/usr/local/cuda}/extras/CUPTI/lib64:$LD_LIBRARY_PATH
elapsed() { echo $(( $(date +%s) - start )); }
left() { echo $(( BUDGET - $(elapsed) )); }
TLOG=$OUT/torch.log
: > "$TLOG"
say() { echo "== $* ($(elapsed) s)" | tee -a "$TLOG"; }

say "native crash tracer"
gcc -shared -fPIC -O1 -o /tmp/crash_trace.so scripts/gpu/crash_trace.c >> "$TLOG" 2>&1

say "background: g++ $(g++ -dumpversion) build of magneton._torch (build-gpu)"
mkdir -p /tmp/g13
( cmake -S . -B build-gpu -G Ninja $GPU_CMAKE_ARGS > /tmp/g13/build.log 2>&1 &&
  nice timeout 140 ninja -C build-gpu -j10 magneton_torch >> /tmp/g13/build.log 2>&1
  echo "BUILD_EXIT $?" >> /tmp/g13/build.log ) &
builder=$!

say "kernel tracing: scripts/gpu/cupti.sh (prebuilt)"
OUT=/tmp/cupti-out PREBUILT=.gpubin BUDGET=$(( BUDGET - 90 )) bash scripts/gpu/cupti.sh > /tmp/cupti-console.txt 2>&1
tar -C /tmp/cupti-out -czf "$OUT/cupti.tar.gz" . 2>/dev/null
cat /tmp/cupti-out/summary.txt >> "$TLOG" 2>/dev/null

# The recorder, from a given python/magneton folder, one process per case.
rec_code='import os, sys, tempfile, torch, magneton
dev = os.environ["DIAG_DEV"]
x = torch.randn(64, 64, device=dev); lin = torch.nn.Linear(64, 64).to(dev)
p = tempfile.mktemp(suffix=".mgt")
with torch.no_grad(), magneton.record(p, fingerprints=os.environ.get("DIAG_FPS") == "1") as rec:
    print("recording started", flush=True)
    y = torch.relu(lin(x)); torch.ones(3, device=dev).sum().item()
    print("ops ran", flush=True)
print("stopped:", rec.summary, flush=True)
run = magneton.load_run(p)
print("loaded: ops", len(run["ops"]), "kernels", len(run["kernels"]), "linked", sum(k["op"] >= 0 for k in run["kernels"]))'
diag() {  # NAME PKGDIR ENV... : one recording in its own process
  local name=$1 pkg=$2; shift 2
  [ "$(left)" -lt 12 ] && { echo "DIAG $name skipped: out of time" | tee -a "$TLOG"; return 125; }
  echo "-- diag $name" >> "$TLOG"
  env "$@" PYTHONPATH="$pkg" LD_PRELOAD=/tmp/crash_trace.so timeout -k 3 30 \
    python3 -X faulthandler -u -c "$rec_code" >> "$TLOG" 2>&1
  local rc=$?
  printf 'DIAG %-34s exit %s\n' "$name" "$rc" | tee -a "$TLOG"
  return $rc
}
# addr2line for our module's frames in the crash traces (it has debug info).
symbolize() {
  grep -o 'crash_trace: #[0-9 ]*[^ ]*_torch[^ ]*+0x[0-9a-f]*' "$TLOG" | sed 's/.*#[0-9 ]*//' | sort -u |
    while IFS=+ read -r lib off; do echo "$lib+$off: $(addr2line -f -C -i -e "$lib" "$off" 2>/dev/null | tr '\n' ' ')"; done |
    tee -a "$TLOG"
}

say "torch recorder, prebuilt with g++ 12"
mkdir -p /tmp/g12/magneton && cp python/magneton/*.py /tmp/g12/magneton/ && cp -r python/magneton/*/ /tmp/g12/magneton/ &&
  cp .gpubin/_*.so /tmp/g12/magneton/
ok12=1
diag g12-cpu /tmp/g12 DIAG_DEV=cpu || { ok12=0; diag g12-cpu-no-cupti /tmp/g12 DIAG_DEV=cpu MAGNETON_TORCH_KERNELS=0; }
diag g12-cuda /tmp/g12 DIAG_DEV=cuda || ok12=0
diag g12-cuda-fingerprints /tmp/g12 DIAG_DEV=cuda DIAG_FPS=1 || ok12=0

say "torch recorder, built here with g++ 13"
while kill -0 $builder 2>/dev/null && [ "$(left)" -gt 40 ]; do sleep 2; done
tail -n 4 /tmp/g13/build.log >> "$TLOG"
if grep -q "BUILD_EXIT 0" /tmp/g13/build.log; then  # the module lands in python/magneton
  diag g13-cpu "$PWD/python" DIAG_DEV=cpu
  diag g13-cpu-no-cupti "$PWD/python" DIAG_DEV=cpu MAGNETON_TORCH_KERNELS=0
  diag g13-cuda "$PWD/python" DIAG_DEV=cuda
else
  echo "DIAG g13 not built in time" | tee -a "$TLOG"
fi
symbolize

if [ "$ok12" = 1 ] && [ "$(left)" -gt 50 ]; then
  say "GPT-2 recording and measured passes (prebuilt recorder)"
  PYTHONPATH=/tmp/g12 NO_BUILD=1 TORCH_SH_PHASES="values measured" OUT=/tmp/torch-out \
    timeout $(( $(left) - 3 )) bash scripts/gpu/torch.sh >> "$TLOG" 2>&1
  cat /tmp/torch-out/summary.txt >> "$TLOG" 2>/dev/null
fi

say "done"
{ echo "capture check on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC'), $(elapsed) s"
  cat /tmp/cupti-out/summary.txt 2>/dev/null
  grep '^DIAG\|^pass\|^values\|^measured' "$TLOG"; } > "$OUT/summary.txt"
cat "$OUT/summary.txt"
