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
