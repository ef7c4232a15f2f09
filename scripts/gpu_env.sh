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
set +e

# gpu_build TARGET...: what a script needs, where a build here leaves it
# (build-gpu/magneton, build-gpu/libmagneton_cupti.so, python/magneton/_*.so).
# With .gpubin/ carried (scripts/gpu/prebuild.sh, run on the CPU machine) it
# copies those binaries instead of compiling, so device time goes to measuring.
gpu_build() {
  if [ -f .gpubin/magneton ] && [ -f .gpubin/libmagneton_cupti.so ] && ls .gpubin/_torch.*.so >/dev/null 2>&1; then
    mkdir -p build-gpu && cp .gpubin/magneton .gpubin/libmagneton_cupti.so build-gpu/ &&
      cp .gpubin/_*.so python/magneton/ && echo "gpu_build: prebuilt binaries from .gpubin"
    return
  fi
  cmake -S . -B build-gpu -G Ninja $GPU_CMAKE_ARGS && ninja -C build-gpu -j16 "$@"
}
