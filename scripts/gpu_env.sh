# Sourced by scripts/gpu/*.sh on the GPU machine (Ubuntu 24.04 image with no
# package access): unpacks the Debian -dev packages carried in .gpudeps/ that the
# image lacks (sqlite3 headers, libunwind) into /tmp/gpudeps, and exports the
# CMake arguments that point the build at them.
set -e
root=/tmp/gpudeps
if [ -d .gpudeps ] && [ ! -d $root/usr ]; then
  mkdir -p $root
  for d in .gpudeps/*.deb; do dpkg -x "$d" $root; done
fi
# The toolkit may live only under /usr/local/cuda-13.0 (no /usr/local/cuda link).
if [ -z "${CUDA_HOME:-}" ] && command -v nvcc >/dev/null; then
  export CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
fi
if [ -z "${CUDA_HOME:-}" ]; then
  for d in /usr/local/cuda /usr/local/cuda-*; do [ -x "$d/bin/nvcc" ] && export CUDA_HOME=$d && break; done
fi
export GPU_CMAKE_ARGS="-DSQLite3_INCLUDE_DIR=$root/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 -DCMAKE_PREFIX_PATH=$root/usr -DCUDAToolkit_ROOT=${CUDA_HOME:-/usr/local/cuda} -DPython_EXECUTABLE=$(command -v python3) -DMAGNETON_TESTS=OFF -DMAGNETON_BENCH=OFF"
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# Binaries linked here look for libcupti.so.13 in /usr/local/cuda/lib64 (their RUNPATH);
# where the toolkit lives elsewhere, or keeps CUPTI under extras/, point the loader there.
if [ ! -e /usr/local/cuda/lib64/libcupti.so.13 ] && [ -n "${CUDA_HOME:-}" ]; then
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CUDA_HOME/lib64:$CUDA_HOME/extras/CUPTI/lib64
fi
set +e

# cap SECONDS: SECONDS, or fewer so that the script still ends inside its BUDGET
# (needs $start and $BUDGET; keeps RESERVE seconds, default 20, for the summary).
cap() {
  local l=$(( BUDGET - ($(date +%s) - start) - ${RESERVE:-20} ))
  if [ "$l" -lt "$1" ]; then echo $(( l > 5 ? l : 5 )); else echo "$1"; fi
}
# step TEXT: a heading with the seconds since $start, on the terminal and in $log.
step() { echo "== $* ($(( $(date +%s) - start )) s)" | tee -a "$log"; }
# t SECONDS CMD...: CMD under a timeout cut to the budget (killed 5 s after SIGTERM).
t() { local s; s=$(cap "$1"); shift; timeout -k 5 "$s" "$@"; }
# outputs NAME: $OUT made, its log.txt ($log) and summary.txt ($summary) emptied, a
# work folder $W (/tmp/NAME.XXXX), the project's Python package on the path and $py
# (MAGNETON_PYTHON, else python3) to run it.
outputs() {
  mkdir -p "$OUT"
  log="$OUT/log.txt" summary="$OUT/summary.txt"
  : > "$log"; : > "$summary"
  W=$(mktemp -d "/tmp/$1.XXXX")
  export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python
  py=${MAGNETON_PYTHON:-python3}
}
# fit FILE...: gzip any file over 15 MiB (files back from the device: 16 MiB each at most).
fit() {
  local f
  for f in "$@"; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt $((15 * 1024 * 1024)) ] && gzip -f "$f" && echo "fit: gzipped $f"
  done
  return 0
}

# gpu_build TARGET...: what a script needs, where a build here leaves it
# (build-gpu/magneton, build-gpu/libmagneton_cupti.so, python/magneton/_*.so).
# With .gpubin/ carried (scripts/gpu/prebuild.sh, run on the CPU machine) it
# copies those binaries instead of compiling, so device time goes to measuring.
# Where .gpubin was built from other sources (scripts/gpu/sources_stamp.sh) it builds
# instead: stale binaries copied over python/magneton/ would run the old code
# in every later test there.
gpu_build() {
  local here built
  here=$(scripts/gpu/sources_stamp.sh)
  built=$(cat .gpubin/stamp 2>/dev/null) || built=""
  if [ -d .gpubin ] && [ "$here" != "$built" ]; then
    echo "gpu_build: .gpubin was built from other sources (stamp ${built:-none}, these $here): building here" \
      "(scripts/gpu/prebuild.sh refreshes it)"
  elif [ -f .gpubin/magneton ] && [ -f .gpubin/libmagneton_cupti.so ] && ls .gpubin/_torch.*.so >/dev/null 2>&1; then
    mkdir -p build-gpu && cp .gpubin/magneton .gpubin/libmagneton_cupti.so build-gpu/ &&
      cp .gpubin/_*.so python/magneton/ && echo "gpu_build: prebuilt binaries from .gpubin" || return
    # A library the loader cannot find here (libfmt.so.9, libsqlite3, libcupti) fails every step.
    ! ldd build-gpu/magneton build-gpu/libmagneton_cupti.so | grep "not found" || echo "gpu_build: unresolved libraries above"
    return 0
  fi
  cmake -S . -B build-gpu -G Ninja $GPU_CMAKE_ARGS && ninja -C build-gpu -j16 "$@"
}
