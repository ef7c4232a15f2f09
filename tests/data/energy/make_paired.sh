#!/usr/bin/env bash
# The paired-attribution fixtures (tests/energy/paired_attribution_test.cpp):
# the measured passes of cases/torch-vs-jax as recorded on the H200
# (2026-12-03, cases/torch-vs-jax/runs/provenance.json), reduced to what
# attribution reads: devices, kernels, copies and sensor series (operators,
# tensors, API calls and stacks removed, kernels unlinked), 1 KiB pages.
#   tests/data/energy/make_paired.sh     (from the repository root; needs sqlite3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
tar -C "$tmp" -xJf "$here/../../../cases/torch-vs-jax/runs/runs.tar.xz" wasteful-measured.mgt efficient-measured.mgt
for pair in "wasteful-measured torch_vs_jax_torch-measured" "efficient-measured torch_vs_jax_jax-measured"; do
  set -- $pair
  sqlite3 "$tmp/$1.mgt" "delete from api_calls; delete from ops; delete from op_io; delete from tensors;
    delete from stack_frames; delete from stacks; delete from frames; update kernels set op = -1;
    PRAGMA page_size = 1024; VACUUM;"
  mv "$tmp/$1.mgt" "$here/$2.mgt"
done
rm -rf "$tmp"
