#!/usr/bin/env bash
# A digest of what the GPU binaries are built from (src/, the CMake files): the
# same on both machines for the same sources, where a git commit is not (the
# GPU machine's copy of the tree has a commit of its own). prebuild.sh writes
# it to .gpubin/stamp; gpu_build (scripts/gpu_env.sh) compares.
export LC_ALL=C  # the sort order, and so the digest, must not depend on the locale
cd "$(dirname "$0")/../.." && find src cmake CMakeLists.txt -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum | cut -c1-40
