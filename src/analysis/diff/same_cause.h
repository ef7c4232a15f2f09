// One cause told once (docs/diff.md, "One cause, one finding"). Regions are
// grouped by the code they run (diff.cpp), so a cause that shows at places
// running different code gives a finding per place, each a share of the
// waste:
// - a cause that makes the device wait at many places of the step (a
//   launch-bound step, a synchronization after every layer): a timeline
//   finding per region;
// - one substitution repeated at places with other names or lines (a flag
//   that changes the kernel of every GEMM, each layer in its own NVTX range):
//   a kernels or operators finding per place, each naming the same kernels or
//   operators on each side;
// - a configuration that differs between the runs (TF32 off): a kernels
//   finding per place, each GEMM shape and convolution with its own kernels,
//   each naming the keys that steer them.
// The waste findings of one side with one cause become one finding holding
// their regions, costed as their sum (timeline: its waits per iteration
// added up).
#pragma once

#include "analysis/diff/diff.h"

namespace magneton::analysis {

// Folds, re-ranks and re-points the regions and timeline items at their findings. A run with one
// such finding per cause is left as it is.
void FoldSameCause(DiffReport& report);

}  // namespace magneton::analysis
