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
export GPU_CMAKE_ARGS="-DSQLite3_INCLUDE_DIR=$root/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 -DCMAKE_PREFIX_PATH=$root/usr -DPython_EXECUTABLE=$(command -v python3) -DMAGNETON_TESTS=OFF -DMAGNETON_BENCH=OFF"
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
set +e
