# Sourced by the build scripts: compile through ccache where it is installed
# (scripts/setup.sh installs it). The cache lives outside the checkout
# (~/.cache/ccache), so every clone on this machine, and the sanitizer, fuzz
# and pip builds of one clone, reuse what another already compiled.
# CMake reads the launcher variables when a build directory is first
# configured; paths under the checkout are hashed relative to it (BASEDIR,
# NOHASHDIR: the debug info's working directory), so a clone elsewhere hits too.
if command -v ccache >/dev/null 2>&1 && [ "${MAGNETON_NO_CCACHE:-0}" != 1 ]; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$here} CCACHE_NOHASHDIR=1
fi
