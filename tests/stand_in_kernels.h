// A CPU recording has no kernels. Tests and benchmarks of the diff's
// per-kernel work (costs, merging XLA-fused regions) on real CPU recordings
// give it stand-ins: one kernel per leaf op, running for the op's time and
// linked to it; with `fused`, only matmuls and multiplies launch one, as if
// XLA had fused the JAX equations between them into those kernels.
#pragma once

#include <algorithm>
#include <vector>

#include "core/run.h"

namespace magneton::testing {

inline void AddStandInKernels(Run& run, bool fused) {
  std::vector<char> parent(run.ops.size(), 0);
  for (const auto& op : run.ops)
    if (op.parent >= 0 && op.parent < static_cast<int64_t>(run.ops.size())) parent[op.parent] = 1;
  for (const auto& op : run.ops) {
    if (parent[op.id] || (fused && op.name != "jax:dot_general" && op.name != "jax:mul")) continue;
    Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.name = op.name + "_kernel";
    k.start_ns = op.start_ns;
    k.end_ns = std::max(op.end_ns, op.start_ns + 1000);
    k.op = op.id;
    k.correlation = k.id + 1;
    run.kernels.push_back(k);
  }
}

}  // namespace magneton::testing
