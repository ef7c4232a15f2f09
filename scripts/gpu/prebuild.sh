#!/usr/bin/env bash
# Builds, on the CPU machine, what scripts/gpu/capture.sh runs on the GPU
# machine, so the device's time goes to measuring, not compiling: the magneton
# command, libmagneton_cupti.so and the Python extensions, into .gpubin/ (ignored
# by git through .git/info/exclude; carried with the device call), without
# their debug sections (PREBUILD_DEBUG=1 keeps the recorder's, compressed). Both machines have
# torch 2.11.0+cu130 and Python 3.12; binaries from Debian 12's glibc 2.36 run
# on the GPU machine's newer one.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
venv=$(scripts/setup.sh | tail -n 1)
# BUILD_DIR=build reuses the normal build (same binaries; its tests are not carried).
bd=${BUILD_DIR:-build-carry}
[ -f "$bd/CMakeCache.txt" ] ||
  cmake -S . -B "$bd" -G Ninja -DPython_EXECUTABLE="$venv/bin/python" -DMAGNETON_TESTS=OFF -DMAGNETON_BENCH=OFF >/dev/null
ninja -C "$bd" magneton magneton_cupti magneton_torch magneton_energy_py >&2
for d in /.gpubin/ /.gpudeps/; do grep -qx "$d" .git/info/exclude 2>/dev/null || echo "$d" >> .git/info/exclude; done
# .gpudeps/: Debian packages the GPU image lacks, unpacked there by gpu_env.sh: the
# run-time libraries of the binaries below, and the headers for scripts that compile there.
if [ ! -d .gpudeps ]; then
  mkdir -p .gpudeps
  (cd .gpudeps && apt-get download libfmt9 libunwind8 libfmt-dev libunwind-dev libsqlite3-dev \
     nlohmann-json3-dev libcli11-dev libeigen3-dev >/dev/null 2>&1) || echo "prebuild: apt-get download failed" >&2
fi
rm -rf .gpubin && mkdir -p .gpubin
scripts/gpu/sources_stamp.sh > .gpubin/stamp  # gpu_build builds instead where the sources moved on
for f in "$bd/magneton" "$bd/libmagneton_cupti.so" python/magneton/_torch.*.so python/magneton/_energy.*.so; do
  objcopy --compress-debug-sections "$f" ".gpubin/$(basename "$f")"
done
# The carry is capped at 64 MiB with the tracked files: the recorder keeps its
# debug sections (for addr2line) only while they fit (PREBUILD_DEBUG=1 keeps them).
strip --strip-debug .gpubin/magneton .gpubin/libmagneton_cupti.so .gpubin/_energy.*.so
[ "${PREBUILD_DEBUG:-0}" = 1 ] || strip --strip-debug .gpubin/_torch.*.so
ls -la .gpubin
